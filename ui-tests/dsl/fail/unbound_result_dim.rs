#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f32, M> {
    x.relu()
}

fn main() {}
