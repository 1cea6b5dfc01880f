#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 2> {
    x.shrink([(0, 2), (2, 4)])
}

fn main() {}
