#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, y: Tensor<f32, 3>) -> Tensor<f32, 2, 3> {
    x.div_mode(y, RoundingMode::Round)
}

fn main() {}
