#[morok::kernel]
fn f(x: Tensor<f32, 4, 128>, y: Tensor<f32, 64>) -> Tensor<f32, 4, 128> {
    x + y
}

fn main() {}
