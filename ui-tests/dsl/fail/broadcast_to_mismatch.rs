#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 3, 3> {
    x.broadcast_to([3, 3])
}

fn main() {}
