#[morok::kernel]
fn f(x: Tensor<f32, 1, 2, 4, 4, 4>) -> Tensor<f32, 1, 2, 2, 2, 2> {
    x.max_pool3d(Pool3dOptions::new((2, 2)))
}

fn main() {}
