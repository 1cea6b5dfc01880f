#[morok::kernel]
fn f(x: Tensor<f32, 2, 3>, y: Tensor<f32, 4, 5>) -> Tensor<f32, 2, 5> {
    Tensor::einsum("ij,jk->ik", [x, y])
}

fn main() {}
