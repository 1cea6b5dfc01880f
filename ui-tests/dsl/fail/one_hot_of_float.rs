#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<i64, N, 4> {
    x.one_hot(4)
}

fn main() {}
