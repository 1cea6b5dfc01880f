#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>) -> Tensor<f32, 2, 3> {
    Tensor::einsum("ij,jk->ik", [x])
}

fn main() {}
