#[morok::kernel]
fn f(x: Tensor<f32, N>, y: Tensor<i32, N>) -> Tensor<f32, N> {
    x + y
}

fn main() {}
