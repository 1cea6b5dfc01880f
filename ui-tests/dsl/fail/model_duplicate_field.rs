morok::dsl::model! {
    pub struct Net {
        fc: Linear(4 -> 4),
        fc: Linear(4 -> 4),
    }
    fn forward(x: f32[B, 4]) -> f32[B, 4] {
        fc(x)
    }
}

fn main() {}
