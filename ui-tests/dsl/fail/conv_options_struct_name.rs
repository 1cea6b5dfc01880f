#[morok::kernel]
fn f(x: Tensor<f32, 1, 3, 8>, w: Tensor<f32, 4, 3, 3>) -> Tensor<f32, 1, 4, 6> {
    x.conv1d(w, None, ConvOptions::default())
}

fn main() {}
