#[morok::kernel]
fn f(x: Tensor<f32, 4, 4>) -> Tensor<f32, 3, 5> {
    x.reshape([3, 5])
}

fn main() {}
