#[morok::kernel]
fn f(x: Tensor<f32, 2, 4>) -> Tensor<f32, 3, 4> {
    x.expand([3, 4])
}

fn main() {}
