#[morok::kernel]
fn f(x: Tensor<f32, 4, 10>, l: Tensor<f32, 4>) -> Tensor<f32> {
    x.cross_entropy(l)
}

fn main() {}
