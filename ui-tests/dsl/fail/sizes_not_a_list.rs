#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 4, 3> {
    x.repeat(2)
}

fn main() {}
