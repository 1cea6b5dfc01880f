#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, l: Tensor<i64, 3>) -> Tensor<f32> {
    x.cross_entropy_with(l, &ClassLossOptions::default())
}

fn main() {}
