#[morok::kernel]
fn f(x: Tensor<f32, N, 64>, w: Tensor<f32, 10, 32>) -> Tensor<f32, N, 10> {
    x.linear(w, None)
}

fn main() {}
