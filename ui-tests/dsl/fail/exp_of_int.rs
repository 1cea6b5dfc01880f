#[morok::kernel]
fn f(x: Tensor<i32, N>) -> Tensor<i32, N> {
    x.exp()
}

fn main() {}
