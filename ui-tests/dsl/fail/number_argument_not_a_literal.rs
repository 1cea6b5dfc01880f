#[morok::kernel]
fn f(x: Tensor<f32, N>, s: Tensor<f32, N>) -> Tensor<f32, N> {
    x.leaky_relu(s)
}

fn main() {}
