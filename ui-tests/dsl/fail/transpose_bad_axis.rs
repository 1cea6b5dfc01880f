#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 2> {
    x.transpose(0, 2)
}

fn main() {}
