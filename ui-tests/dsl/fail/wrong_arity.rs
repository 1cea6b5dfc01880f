#[morok::kernel]
fn f(x: Tensor<f32, B, N>) -> Tensor<f32, B, N> {
    x.softmax(-1, 0)
}

fn main() {}
