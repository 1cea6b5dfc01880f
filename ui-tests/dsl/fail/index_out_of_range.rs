#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3> {
    x.index([Index::Int(2)])
}

fn main() {}
