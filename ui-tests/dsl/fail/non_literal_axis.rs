#[morok::kernel]
fn f(x: Tensor<f32, N>, k: Tensor<f32, N>) -> Tensor<f32, N> {
    x.softmax(k)
}

fn main() {}
