#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f32, N> {
    x + (1.0 < 2.0)
}

fn main() {}
