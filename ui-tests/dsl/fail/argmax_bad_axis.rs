#[morok::kernel]
fn f(x: Tensor<f32, B, N>) -> Tensor<i32, B> {
    x.argmax(3)
}

fn main() {}
