#[morok::kernel]
fn f(x: Tensor<f32, N, 3>, t: Tensor<f32, N, 4>) -> Tensor<f32> {
    x.mse_loss(t, Reduction::Mean)
}

fn main() {}
