#[morok::kernel]
fn f(x: Tensor<f32, B, 3, H, H>) -> Tensor<f32, B, 3, H, H> {
    x.avg_pool2d(PoolOptions::new((2, 2)).ceil_mode(true))
}

fn main() {}
