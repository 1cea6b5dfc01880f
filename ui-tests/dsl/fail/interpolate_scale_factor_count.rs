#[morok::kernel]
fn f(x: Tensor<f32, 1, 2, 5, 5>) -> Tensor<f32, 1, 2, 10, 10> {
    x.interpolate_scale([2.0], InterpolateMode::Nearest, false)
}

fn main() {}
