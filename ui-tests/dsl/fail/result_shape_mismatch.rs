#[morok::kernel]
fn f(x: Tensor<f32, B, 64>, w: Tensor<f32, 64, 10>) -> Tensor<f32, B, 20> {
    let h = x.dot(w);
    h.relu()
}

fn main() {}
