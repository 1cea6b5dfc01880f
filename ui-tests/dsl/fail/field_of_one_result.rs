#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f32, N> {
    x.relu().0
}

fn main() {}
