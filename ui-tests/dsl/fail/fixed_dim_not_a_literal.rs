#[morok::kernel(B = N)]
fn f(x: Tensor<f32, B, 64>) -> Tensor<f32, B, 64> {
    x.relu()
}

fn main() {}
