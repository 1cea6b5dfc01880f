morok::dsl::model! {
    pub struct Net {
        conv: Conv2d(3 -> 8, kernel = 3, stride = 1, padding = 1),
    }
    fn forward(x: f32[B, 1, 28, 28]) -> f32[B, 8, 28, 28] {
        conv(x).relu()
    }
}

fn main() {}
