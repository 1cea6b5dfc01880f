#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f32, N> {
    let _h = x.relu();
    2.0
}

fn main() {}
