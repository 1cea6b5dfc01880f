#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, y: Tensor<f32, 2, 3>) -> Tensor<f32, 4, 3> {
    x.cat([y], 0)
}

fn main() {}
