use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Add(x @ @zero, x @ @one) ~> x,
        Mul(@const(v), @const(v)) ~> UOp::index(0),
        Sub(ctx, _) ~> ctx,
        for op in binary [Add] { op(op, _) ~> UOp::index(0) },
    };
}
