#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, p: Tensor<f32, 2, 3>) -> Tensor<f32> {
    x.cross_entropy_with(p, &ClassLossOptions { ignore_index: Some(0), ..Default::default() })
}

fn main() {}
