use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Add(x) ~> x,
        Neg(x, _, ..) ~> x,
        Cast(Where(c, t)) ~> c,
        for op in unary [Neg, Exp] { op(x, y) ~> y },
    };
}
