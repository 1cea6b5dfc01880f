//! The DSL's two-layer perceptrons (`docs/DSL.md`): the `mlp` kernel and
//! the `DigitsMlp` model, shared by the examples, the DSL tests and the
//! DSL benchmark. (The macro
//! spells the tensor type out as `::morok::Tensor`.)

/// A two-layer perceptron: `B` is any batch size, the other dims are fixed.
#[morok::kernel]
pub fn mlp(
    x: Tensor<f32, B, 64>,
    w1: Tensor<f32, 64, 128>,
    w2: Tensor<f32, 128, 10>,
) -> Tensor<f32, B, 10> {
    let h = x.dot(w1).relu();
    h.dot(w2).softmax(-1)
}

morok::dsl::model! {
    /// A two-layer perceptron over 8×8 digits.
    pub struct DigitsMlp {
        fc1: Linear(64 -> 128),
        fc2: Linear(128 -> 10),
    }
    pub fn forward(x: f32[B, 64]) -> f32[B, 10] {
        fc2(fc1(x).relu()).softmax(-1)
    }
}
