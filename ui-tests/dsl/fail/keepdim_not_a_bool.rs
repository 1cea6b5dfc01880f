#[morok::kernel]
fn f(x: Tensor<f32, N, 4>) -> Tensor<f32, N> {
    x.sum([1], 0)
}

fn main() {}
