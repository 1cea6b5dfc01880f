#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.flip([0, -2])
}

fn main() {}
