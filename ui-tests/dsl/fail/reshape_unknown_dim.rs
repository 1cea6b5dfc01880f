#[morok::kernel]
fn f(x: Tensor<f32, B, 64>) -> Tensor<f32, B, 8, 8> {
    x.reshape([C, 8, -1])
}

fn main() {}
