#[morok::kernel]
fn broken(x: Tensor<f32, B, 64>, w: Tensor<f32, 32, 10>) -> Tensor<f32, B, 10> {
    x.dot(w)
}

fn caller(x: &morok::Tensor, w: &morok::Tensor) -> morok::Result<Vec<usize>> {
    let y = broken(x, w)?;
    Ok(y.shape().to_vec())
}

fn main() {}
