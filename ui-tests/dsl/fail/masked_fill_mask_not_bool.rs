#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, m: Tensor<i32, 3>) -> Tensor<f32, 2, 3> {
    x.masked_fill(m, 0.0)
}

fn main() {}
