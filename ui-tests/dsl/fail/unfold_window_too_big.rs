#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 1, 4> {
    x.unfold(1, 4, 1)
}

fn main() {}
