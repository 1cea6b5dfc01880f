#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 2, 2>, s: Tensor<f32, 2, 1>) -> Tensor<f32, 2, 3> {
    x.scatter(1, ix, s)
}

fn main() {}
