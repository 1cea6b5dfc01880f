morok::dsl::model! {
    pub struct Net {
        emb: Embedding(100 -> 16),
    }
    fn forward(x: f32[B, T]) -> f32[B, T, 16] {
        emb(x)
    }
}

fn main() {}
