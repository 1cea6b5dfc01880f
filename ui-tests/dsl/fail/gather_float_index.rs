#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, ix: Tensor<f32, 2, 2>) -> Tensor<f32, 2, 2> {
    x.gather(1, ix)
}

fn main() {}
