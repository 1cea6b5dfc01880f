morok::dsl::model! {
    pub struct Net {
        drop: Dropout(1.5),
    }
    fn forward(x: f32[B, 6]) -> f32[B, 6] {
        drop(x)
    }
}

fn main() {}
