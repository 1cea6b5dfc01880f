#[morok::kernel]
fn f(x: Tensor<f32, B, 3>) -> Tensor<f32, 1, 3> {
    x.slice([0..1])
}

fn main() {}
