#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f16, 2, 3> {
    x.bitcast(f16)
}

fn main() {}
