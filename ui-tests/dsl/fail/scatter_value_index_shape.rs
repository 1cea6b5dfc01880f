#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 3, 2>) -> Tensor<f32, 2, 3> {
    x.scatter_value(1, ix, 1.0)
}

fn main() {}
