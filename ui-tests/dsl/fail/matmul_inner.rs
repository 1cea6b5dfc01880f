#[morok::kernel]
fn f(a: Tensor<f32, 4, 64>, b: Tensor<f32, 128, 10>) -> Tensor<f32, 4, 10> {
    a.dot(b)
}

fn main() {}
