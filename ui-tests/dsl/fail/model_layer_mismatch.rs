morok::dsl::model! {
    pub struct Mlp {
        fc1: Linear(64 -> 128),
        fc2: Linear(64 -> 10),
    }
    fn forward(x: f32[B, 64]) -> f32[B, 10] {
        fc2(fc1(x).relu())
    }
}

fn main() {}
