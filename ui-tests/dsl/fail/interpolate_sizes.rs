#[morok::kernel]
fn f(x: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 8> {
    x.interpolate([8], InterpolateMode::Bilinear, false)
}

fn main() {}
