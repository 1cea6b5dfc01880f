#[morok::kernel]
fn f(x: Tensor<f32, 1, 3>) -> Tensor<f32, 2, 3> {
    x.expand([-2, 3])
}

fn main() {}
