#[morok::kernel]
fn f(x: Tensor<f32, N, 3>) -> Tensor<f32, N, 5> {
    x.topk(5, 1, true).0
}

fn main() {}
