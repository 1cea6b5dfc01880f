#[morok::kernel]
fn f(x: Tensor<f32, N>, t: Tensor<f32, N>) -> Tensor<f32> {
    x.l1_loss(t, mean)
}

fn main() {}
