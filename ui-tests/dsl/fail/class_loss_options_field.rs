#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, l: Tensor<i64, 2>) -> Tensor<f32> {
    x.nll_loss(l, &ClassLossOptions { weights: None, ..Default::default() })
}

fn main() {}
