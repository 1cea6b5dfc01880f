#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 4, 2>) -> Tensor<f32, 4, 2> {
    x.gather(1, ix)
}

fn main() {}
