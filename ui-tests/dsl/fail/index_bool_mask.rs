#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, m: Tensor<bool, 2>) -> Tensor<f32, 2, 3> {
    x.index([Index::Tensor(m)])
}

fn main() {}
