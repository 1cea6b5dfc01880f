use morok::{DType, Tensor};

#[morok::kernel(B = 2, N = 3)]
fn fixed(x: Tensor<f32, B, N>, y: Tensor<f32, N>) -> Tensor<f32, B, N> {
    x + y
}

fn main() -> morok::Result<()> {
    let x = Tensor::zeros(&[2, 3], DType::F32);
    let y = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    assert_eq!(fixed(&x, &y)?.to_vec::<f32>()?, [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    assert!(fixed(&Tensor::zeros(&[3, 3], DType::F32), &y).is_err());
    assert_eq!(morok::aot::kernels!(fixed)[0].sig.kernel, "fixed");
    Ok(())
}
