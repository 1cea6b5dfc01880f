#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, ix: Tensor<i64, 2, 2>) -> Tensor<f32, 2, 4> {
    x.index_select(1, ix)
}

fn main() {}
