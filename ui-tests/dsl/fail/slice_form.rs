#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    x.slice([0..=1])
}

fn main() {}
