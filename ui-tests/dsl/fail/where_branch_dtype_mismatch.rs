#[morok::kernel]
fn f(c: Tensor<bool, N>, x: Tensor<f32, N>, y: Tensor<f16, N>) -> Tensor<f32, N> {
    c.where_(x, y)
}

fn main() {}
