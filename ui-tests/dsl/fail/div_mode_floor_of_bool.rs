#[morok::kernel]
fn f(x: Tensor<bool, 2, 3>, y: Tensor<bool, 3>) -> Tensor<bool, 2, 3> {
    x.div_mode(y, RoundingMode::Floor)
}

fn main() {}
