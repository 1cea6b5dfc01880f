#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<i32, N> {
    x.relu()
}

fn main() {}
