//! The DSL's two-layer perceptron (`docs/DSL.md`), shared by the
//! `kernel_attr` example, the DSL tests and the DSL benchmark. (The macro
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
