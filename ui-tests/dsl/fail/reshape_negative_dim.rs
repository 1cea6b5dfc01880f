#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 6> {
    x.reshape([-2, 3])
}

fn main() {}
