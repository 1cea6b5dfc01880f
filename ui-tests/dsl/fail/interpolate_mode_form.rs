#[morok::kernel]
fn f(x: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 8, 8> {
    x.interpolate([8, 8], Bilinear, false)
}

fn main() {}
