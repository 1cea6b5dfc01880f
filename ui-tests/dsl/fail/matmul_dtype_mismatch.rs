#[morok::kernel]
fn f(x: Tensor<f32, N, 4>, w: Tensor<f16, 4, 2>) -> Tensor<f32, N, 2> {
    x.matmul(w)
}

fn main() {}
