#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, t: Tensor<f32, 2, 3>, w: Tensor<f32, 2>) -> Tensor<f32, 2, 3> {
    x.lerp(t, w)
}

fn main() {}
