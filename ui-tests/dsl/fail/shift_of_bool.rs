#[morok::kernel]
fn f(c: Tensor<bool, 3>) -> Tensor<bool, 3> {
    c.bitwise_left_shift(true)
}

fn main() {}
