#[morok::kernel]
fn f(x: Tensor<f32, 1, 3, 8>, w: Tensor<f32, 4, 2, 3>) -> Tensor<f32, 1, 4, 6> {
    x.conv1d(w, None, Conv1dOptions { groups: 2, ..Default::default() })
}

fn main() {}
