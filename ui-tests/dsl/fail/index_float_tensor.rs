#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, i: Tensor<f32, 2>) -> Tensor<f32, 2, 3> {
    x.index([Index::Tensor(i)])
}

fn main() {}
