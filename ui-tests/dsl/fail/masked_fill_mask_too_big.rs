#[morok::kernel]
fn f(x: Tensor<f32, 3>, m: Tensor<bool, 2, 3>) -> Tensor<f32, 3> {
    x.masked_fill(m, 0.0)
}

fn main() {}
