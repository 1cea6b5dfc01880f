#[morok::kernel]
fn f(c: Tensor<f32, N>, x: Tensor<f32, N>) -> Tensor<f32, N> {
    c.where_(x, 0.0)
}

fn main() {}
