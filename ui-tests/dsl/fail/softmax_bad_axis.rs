#[morok::kernel]
fn f(x: Tensor<f32, 4, 4>) -> Tensor<f32, 4, 4> {
    x.softmax(2)
}

fn main() {}
