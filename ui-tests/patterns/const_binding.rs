use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Mul(x, @const(a, b)) ~> x,
    };
}
