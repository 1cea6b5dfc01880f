#[morok::kernel]
fn f(x: Tensor<f32, N, 4>) -> Tensor<f32, N> {
    x.var([1], -1, false)
}

fn main() {}
