morok::dsl::model! {
    pub struct Net {
        head: Sequential(Linear(6 -> 8), Param[8]),
    }
    fn forward(x: f32[B, 6]) -> f32[B, 8] {
        head(x)
    }
}

fn main() {}
