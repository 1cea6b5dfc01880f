use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Sub(x, y) -> x,
    };
}
