//! Weight initializers of `torch.nn.init` (seeded): Kaiming (He) and
//! Xavier (Glorot), uniform and normal, with PyTorch's fan rules: for a
//! weight `[out, in, k...]`, `fan_in = in · prod(k)` and `fan_out = out ·
//! prod(k)`.

use super::Tensor;
use crate::error::{Error, Result};
use crate::DType;
use morok_core::shape::ShapeError;

/// `(fan_in, fan_out)` of a weight shape (at least 2 axes) of a float
/// `dtype`.
#[track_caller]
fn fans(op: &str, shape: &[usize], dtype: DType) -> Result<(f64, f64)> {
    let t = super::creation::element_type(op, dtype)?;
    if !t.is_float() {
        return Err(Error::dtype(op, format!("{t} is not a float type")));
    }
    if shape.len() < 2 {
        return Err(Error::shape(ShapeError::new(
            op,
            &[shape],
            "fans need a weight with at least 2 axes",
        )));
    }
    super::checked_numel(op, shape)?;
    let field: usize = shape[2..].iter().product();
    let (fan_in, fan_out) = (shape[1] * field, shape[0] * field);
    if fan_in == 0 || fan_out == 0 {
        return Err(Error::shape(ShapeError::new(op, &[shape], "a fan is zero")));
    }
    Ok((fan_in as f64, fan_out as f64))
}

impl Tensor {
    /// `U(-bound, bound)` samples from `seed`.
    #[track_caller]
    fn uniform_between(shape: &[usize], dtype: DType, seed: u64, bound: f64) -> Result<Tensor> {
        let u = Tensor::rand_seeded(shape, dtype, seed);
        u.mul(2.0 * bound)?.sub(bound)
    }

    /// `kaiming_uniform_(a, mode="fan_in", nonlinearity="leaky_relu")`:
    /// `U(-b, b)` with `b = sqrt(2 / (1 + a²)) · sqrt(3 / fan_in)`.
    #[track_caller]
    pub fn kaiming_uniform(shape: &[usize], dtype: DType, a: f64, seed: u64) -> Result<Tensor> {
        let (fan_in, _) = fans("kaiming_uniform", shape, dtype)?;
        let gain = (2.0 / (1.0 + a * a)).sqrt();
        Tensor::uniform_between(shape, dtype, seed, gain * (3.0 / fan_in).sqrt())
    }

    /// `kaiming_normal_(a, mode="fan_in", nonlinearity="leaky_relu")`:
    /// `N(0, std²)` with `std = sqrt(2 / (1 + a²)) / sqrt(fan_in)`.
    #[track_caller]
    pub fn kaiming_normal(shape: &[usize], dtype: DType, a: f64, seed: u64) -> Result<Tensor> {
        let (fan_in, _) = fans("kaiming_normal", shape, dtype)?;
        let std = (2.0 / (1.0 + a * a)).sqrt() / fan_in.sqrt();
        Tensor::randn_seeded(shape, dtype, seed).mul(std)
    }

    /// `xavier_uniform_(gain)`: `U(-b, b)` with `b = gain · sqrt(6 /
    /// (fan_in + fan_out))`.
    #[track_caller]
    pub fn xavier_uniform(shape: &[usize], dtype: DType, gain: f64, seed: u64) -> Result<Tensor> {
        let (fi, fo) = fans("xavier_uniform", shape, dtype)?;
        Tensor::uniform_between(shape, dtype, seed, gain * (6.0 / (fi + fo)).sqrt())
    }

    /// `xavier_normal_(gain)`: `N(0, std²)` with `std = gain · sqrt(2 /
    /// (fan_in + fan_out))`.
    #[track_caller]
    pub fn xavier_normal(shape: &[usize], dtype: DType, gain: f64, seed: u64) -> Result<Tensor> {
        let (fi, fo) = fans("xavier_normal", shape, dtype)?;
        Tensor::randn_seeded(shape, dtype, seed).mul(gain * (2.0 / (fi + fo)).sqrt())
    }
}
