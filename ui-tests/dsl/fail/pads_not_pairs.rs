#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 5> {
    x.pad([1, 1], 0.0)
}

fn main() {}
