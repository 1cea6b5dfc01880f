use morok_core::patterns;

fn main() {
    let _ = patterns! {
        Add[x, @zero] ~> |y| y.clone(),
    };
}
