#[morok::kernel]
fn f(x: Tensor<f32, N>, y: Tensor<f32, N>) -> Tensor<f32, N> {
    x.bitwise_and(y)
}

fn main() {}
