#[morok::kernel]
fn f(x: Tensor<f32, B, N>) -> Tensor<f32, B> {
    x.sum(1, false)
}

fn main() {}
