#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 2> {
    x.permute([0, 0])
}

fn main() {}
