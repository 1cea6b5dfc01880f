#[morok::kernel]
fn f<B>(x: Tensor<f32, B, 3>, y: Tensor<f32, 4, 5>) -> Tensor<f32, 3, 5> {
    Tensor::einsum("ij,ik->jk", [x, y])
}

fn main() {}
