#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 9> {
    x.pad_mode([(0, 0), (3, 3)], PadMode::Reflect)
}

fn main() {}
