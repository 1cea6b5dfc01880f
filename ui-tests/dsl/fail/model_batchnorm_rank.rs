morok::dsl::model! {
    pub struct Net {
        bn: BatchNorm2d(8),
    }
    fn forward(x: f32[B, 8, 16]) -> f32[B, 8, 16] {
        bn(x)
    }
}

fn main() {}
