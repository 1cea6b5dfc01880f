#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32> {
    x.index([Index::Int(0), Index::Int(0), Index::Int(0)])
}

fn main() {}
