#[morok::kernel]
fn f(x: Tensor<f32, 4, 3>, t: Tensor<f32, 4, 3>, w: Tensor<f32, 4>) -> Tensor<f32> {
    x.binary_cross_entropy(t, Some(w), Reduction::Mean)
}

fn main() {}
