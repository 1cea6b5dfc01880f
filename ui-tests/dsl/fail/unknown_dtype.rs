#[morok::kernel]
fn f(x: Tensor<f33, N>) -> Tensor<f32, N> {
    x.relu()
}

fn main() {}
