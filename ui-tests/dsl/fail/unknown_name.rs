#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f32, N> {
    let h = x.relu();
    g + h
}

fn main() {}
