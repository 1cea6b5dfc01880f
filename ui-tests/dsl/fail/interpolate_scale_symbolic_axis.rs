#[morok::kernel]
fn f<H>(x: Tensor<f32, 1, 2, H, 5>) -> Tensor<f32, 1, 2, H, 10> {
    x.interpolate_scale([1.0, 2.0], InterpolateMode::Nearest, false)
}

fn main() {}
