use morok_core::patterns;

fn main() {
    // `=> try` wants a Result<Option<_>, E>, not an Option.
    let _ = patterns! {
        Neg(x) => try Some(x),
    };
}
