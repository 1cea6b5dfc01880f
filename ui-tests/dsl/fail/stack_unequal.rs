#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3, 2>) -> Tensor<f32, 2, 2, 3> {
    Tensor::stack([x, y], 0)
}

fn main() {}
