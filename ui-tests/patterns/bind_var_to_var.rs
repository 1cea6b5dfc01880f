use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Mul(x @ y, _) ~> x,
    };
}
