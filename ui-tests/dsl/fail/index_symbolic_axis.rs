#[morok::kernel]
fn f<B>(x: Tensor<f32, B, 3>) -> Tensor<f32, 3> {
    x.index([Index::Int(0)])
}

fn main() {}
