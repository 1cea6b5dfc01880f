morok::dsl::model! {
    pub struct Net {
        head: Sequential(Linear(6 -> 8), Relu, Linear(4 -> 3)),
    }
    fn forward(x: f32[B, 6]) -> f32[B, 3] {
        head(x)
    }
}

fn main() {}
