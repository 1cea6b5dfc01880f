#[morok::kernel]
fn f(x: Vec<f32>) -> Tensor<f32, N> {
    x.relu()
}

fn main() {}
