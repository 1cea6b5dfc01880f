#[morok::kernel]
fn f(x: Tensor<f32, N>) -> Tensor<f16, N> {
    x.cast(16)
}

fn main() {}
