#[morok::kernel]
fn f(x: Tensor<f32, B, C>) -> Tensor<f32, B> {
    x.diagonal(0, 0, 1)
}

fn main() {}
