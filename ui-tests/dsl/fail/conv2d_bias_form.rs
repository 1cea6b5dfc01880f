#[morok::kernel]
fn f(x: Tensor<f32, 1, 3, 8, 8>, w: Tensor<f32, 4, 3, 3, 3>, b: Tensor<f32, 4>) -> Tensor<f32, 1, 4, 6, 6> {
    x.conv2d(w, b, ConvOptions::default())
}

fn main() {}
