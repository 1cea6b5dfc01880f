use morok_core::patterns;

fn main() {
    let _ = patterns! {
        End(.., x) ~> x,
    };
}
