#[morok::kernel]
fn f(x: Tensor<bool, 2, 3>, ix: Tensor<i64, 2, 2>, s: Tensor<bool, 2, 2>) -> Tensor<bool, 2, 3> {
    x.scatter_reduce(1, ix, s, ScatterReduce::Sum, true)
}

fn main() {}
