#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, i: Tensor<i64, 2>, j: Tensor<i64, 3>) -> Tensor<f32, 2> {
    x.index([Index::Tensor(i), Index::Tensor(j)])
}

fn main() {}
