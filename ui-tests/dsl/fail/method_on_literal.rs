#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f32, N> {
    x + 2.0.relu()
}

fn main() {}
