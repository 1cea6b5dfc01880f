#[morok::kernel]
fn f(x: Tensor<f32, 1, 3, 4, 4>) -> Tensor<f32, 1, 3, 1, 1> {
    x.max_pool2d(PoolOptions::new((5, 5)))
}

fn main() {}
