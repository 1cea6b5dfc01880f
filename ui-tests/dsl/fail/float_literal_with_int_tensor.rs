#[morok::kernel]
fn f(x: Tensor<i32, N>) -> Tensor<i32, N> {
    x * 2.5
}

fn main() {}
