use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Where(Const, t, _) ~> t,
    };
}
