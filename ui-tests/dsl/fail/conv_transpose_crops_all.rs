#[morok::kernel]
fn f(x: Tensor<f32, 1, 2, 3, 3>, w: Tensor<f32, 2, 3, 2, 2>) -> Tensor<f32, 1, 3, 1, 1> {
    x.conv_transpose2d(w, None, ConvTransposeOptions { padding: (2, 2), ..Default::default() })
}

fn main() {}
