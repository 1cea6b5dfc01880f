#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3> {
    x.index([Index::First])
}

fn main() {}
