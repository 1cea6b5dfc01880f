use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Neg(x) ~> try Ok::<_, String>(Some(x)),
    };
}
