#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 3> {
    x.pad([(1, 0)], 0.0)
}

fn main() {}
