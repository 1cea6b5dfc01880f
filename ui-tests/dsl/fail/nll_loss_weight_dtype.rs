#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, l: Tensor<i64, 2>, w: Tensor<f16, 3>) -> Tensor<f32> {
    x.nll_loss(l, &ClassLossOptions { weight: Some(w), ..Default::default() })
}

fn main() {}
