#[morok::kernel]
fn f(x: Tensor<f32, 1, 2, 2, 2>, i: Tensor<i64, 1, 2, 2, 3>) -> Tensor<f32, 1, 2, 4, 4> {
    x.max_unpool2d(i, PoolOptions::new((2, 2)), None)
}

fn main() {}
