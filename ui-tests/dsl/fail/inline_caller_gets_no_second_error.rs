fn main() -> morok::Result<()> {
    let f = morok::dsl::kernel!(|a: f32[N, K], b: f32[N, K]| a.dot(b));
    let x = morok::Tensor::zeros(&[2, 2], morok::DType::F32);
    let _y = f(&x, &x)?;
    Ok(())
}
