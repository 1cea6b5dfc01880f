#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>) -> Tensor<f32> {
    x.smooth_l1_loss(t, Reduction::Mean, -1.0)
}

fn main() {}
