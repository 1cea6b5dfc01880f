morok::dsl::model! {
    pub struct Net {
        attn: MultiheadAttention(10, heads = 4),
    }
    fn forward(x: f32[B, L, 10]) -> f32[B, L, 10] {
        attn(x)
    }
}

fn main() {}
