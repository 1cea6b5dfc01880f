#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 6> {
    x.repeat_interleave(2, 1)
}

fn main() {}
