#[morok::kernel]
fn f(x: Tensor<f32, B, 128>, y: Tensor<f32, 64>) -> Tensor<f32, B, 128> {
    let h = x.relu();
    h * y
}

fn main() {}
