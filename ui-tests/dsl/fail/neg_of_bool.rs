#[morok::kernel]
fn f(x: Tensor<bool, N>) -> Tensor<bool, N> {
    -x
}

fn main() {}
