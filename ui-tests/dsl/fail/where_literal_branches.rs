#[morok::kernel]
fn f(c: Tensor<bool, N>) -> Tensor<f32, N> {
    c.where_(1.0, 0.0)
}

fn main() {}
