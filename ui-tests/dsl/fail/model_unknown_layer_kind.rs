morok::dsl::model! {
    pub struct Mlp {
        fc1: Lineer(64 -> 128),
    }
    fn forward(x: f32[B, 64]) -> f32[B, 64] {
        x.relu()
    }
}

fn main() {}
