#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 6> {
    x.flatten(1, 0)
}

fn main() {}
