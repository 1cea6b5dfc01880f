morok::dsl::model! {
    pub struct Net {
        norm: LayerNorm(32),
    }
    fn forward(x: f32[B, 64]) -> f32[B, 64] {
        norm(x)
    }
}

fn main() {}
