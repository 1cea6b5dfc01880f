morok::dsl::model! {
    pub struct Net {
        conv: Conv1d(3 -> 8, kernel = 3),
    }
    fn forward(x: f32[B, 4, 16]) -> f32[B, 8, 14] {
        conv(x)
    }
}

fn main() {}
