#[morok::kernel(C = 4)]
fn f(x: Tensor<f32, B, 64>) -> Tensor<f32, B, 64> {
    x.relu()
}

fn main() {}
