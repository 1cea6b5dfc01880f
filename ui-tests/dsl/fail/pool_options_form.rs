#[morok::kernel]
fn f(x: Tensor<f32, 1, 3, 4, 4>) -> Tensor<f32, 1, 3, 2, 2> {
    x.max_pool2d(PoolOptions::new((2, 2)).strides((2, 2)))
}

fn main() {}
