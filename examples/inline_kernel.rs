//! `kernel!`: an inline, shape-checked closure.

use morok::dsl::kernel;
use morok::Tensor;

fn main() -> morok::Result<()> {
    let f = kernel!(|a: f32[N, K], b: f32[K, M]| (a.dot(b) * 2.0).relu());
    let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    let b = Tensor::from_vec(vec![1.0f32, -1.0, 0.5, -2.0], &[2, 2])?;
    let c = f(&a, &b)?;
    println!("relu(2 a@b) = {:?}", c.to_vec::<f32>()?);
    // Names unify across parameters: both operands of `+` must share `N`.
    let add = kernel!(|x: f32[N], y: f32[N]| {
        let s = x + y;
        s * s
    });
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]);
    println!("(x + x)^2 = {:?}", add(&x, &x)?.to_vec::<f32>()?);
    if let Err(e) = add(&x, &Tensor::from_slice(&[1.0f32])) {
        println!("Error: {e}");
    }
    Ok(())
}
