#[morok::kernel]
fn f(x: Tensor<f32, N, 4>) -> Tensor<f32, N, 4> {
    x.sort(1, false)
}

fn main() {}
