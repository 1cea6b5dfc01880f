#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3, 1> {
    x.unsqueeze(4)
}

fn main() {}
