morok::dsl::model! {
    pub struct Net {
        gn: GroupNorm(4, 6),
    }
    fn forward(x: f32[B, 6, 16]) -> f32[B, 6, 16] {
        gn(x)
    }
}

fn main() {}
