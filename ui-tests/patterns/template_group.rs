use morok_core::patterns;

fn main() {
    let _ = patterns! {
        for op in binary [Add, Neg, Mul] { op(x, _) ~> x },
        for op in quaternary [Add] { op(x, _) ~> x },
    };
}
