#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.roll([1, 2], [0])
}

fn main() {}
