use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Ad(x, @zero) ~> x,
        Mul(x, Frobnicate(..)) ~> x,
        for op in binary [CMP_LT] { op(x, _) ~> x },
    };
}
