#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2> {
    x.sum([1, 1], false)
}

fn main() {}
