#[morok::kernel(B = 0)]
fn f(x: Tensor<f32, B, 64>) -> Tensor<f32, B, 64> {
    x.relu()
}

fn main() {}
