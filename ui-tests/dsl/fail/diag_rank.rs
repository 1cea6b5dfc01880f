#[morok::kernel]
fn f(x: Tensor<f32, 2, 3, 4>) -> Tensor<f32, 2> {
    x.diag(0)
}

fn main() {}
