#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.diagonal(0, 1, -1)
}

fn main() {}
