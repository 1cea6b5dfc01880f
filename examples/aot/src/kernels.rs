//! The kernels, shared by the program and its build script (which
//! compiles them ahead of time): every dim is a literal or fixed.

/// `relu(2a + b)` over 4×8 matrices.
#[morok::kernel]
pub fn scale_add(a: Tensor<f32, 4, 8>, b: Tensor<f32, 4, 8>) -> Tensor<f32, 4, 8> {
    (a * 2.0 + b).relu()
}

/// A two-layer perceptron whose batch is fixed to 32.
#[morok::kernel(B = 32)]
pub fn mlp(
    x: Tensor<f32, B, 64>,
    w1: Tensor<f32, 64, 128>,
    w2: Tensor<f32, 128, 10>,
) -> Tensor<f32, B, 10> {
    let h = x.dot(w1).relu();
    h.dot(w2).softmax(-1)
}
