#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    Tensor::cat([], 0)
}

fn main() {}
