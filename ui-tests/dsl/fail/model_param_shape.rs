morok::dsl::model! {
    pub struct Net {
        w: Param[64, 10],
    }
    fn forward(x: f32[B, 32]) -> f32[B, 10] {
        x.dot(w)
    }
}

fn main() {}
