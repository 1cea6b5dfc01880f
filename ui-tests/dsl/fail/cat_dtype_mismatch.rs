#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, y: Tensor<f16, 2, 3>) -> Tensor<f32, 4, 3> {
    Tensor::cat([x, y], 0)
}

fn main() {}
