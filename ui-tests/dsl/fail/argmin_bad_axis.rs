#[morok::kernel]
fn f(x: Tensor<f32, N, 4>) -> Tensor<i32, N> {
    x.argmin(2)
}

fn main() {}
