//! Activation functions of `torch.nn.functional`, composed of elementwise
//! ops (integer inputs become `f32`).

use super::Tensor;
use crate::error::Result;

/// SELU's `alpha` and `scale` (Klambauer et al.), as in PyTorch.
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

impl Tensor {
    /// `x` where positive, `alpha · (e^x - 1)` elsewhere. The exponential
    /// is taken of 0 where `x` is positive, so that the branch not taken
    /// does not overflow (its gradient there is 0, not `0 · ∞ = NaN`).
    #[track_caller]
    pub fn elu(&self, alpha: f64) -> Result<Tensor> {
        let x = self.to_float()?;
        let positive = x.gt(0.0)?;
        let negative_part = positive.where_(0.0, &x)?;
        positive.where_(&x, &negative_part.expm1()?.mul(alpha)?)
    }

    /// `scale · elu(x, alpha)` with SELU's constants.
    #[track_caller]
    pub fn selu(&self) -> Result<Tensor> {
        self.elu(SELU_ALPHA)?.mul(SELU_SCALE)
    }

    /// `max(0, x) + min(0, alpha · (e^(x/alpha) - 1))`, computed as
    /// `max(0, x) + alpha · (e^(min(0, x)/alpha) - 1)` (equal for any
    /// `alpha != 0`: the second term has the sign of `x / alpha` times
    /// `alpha`'s), whose exponential never overflows (an overflow would
    /// make the gradient `0 · ∞ = NaN` for large `x`).
    #[track_caller]
    pub fn celu(&self, alpha: f64) -> Result<Tensor> {
        let x = self.to_float()?;
        let neg = x.minimum(0.0)?.div(alpha)?.expm1()?.mul(alpha)?;
        x.maximum(0.0)?.add(&neg)
    }

    /// `log(1 + e^(beta·x)) / beta`, and `x` where `beta·x > threshold`.
    /// The soft branch is computed from 0 where it is not taken, so that
    /// `e^(beta·x)` does not overflow there (its gradient would be `0 · ∞
    /// = NaN`).
    #[track_caller]
    pub fn softplus(&self, beta: f64, threshold: f64) -> Result<Tensor> {
        let x = self.to_float()?;
        let bx = x.mul(beta)?;
        let linear = bx.gt(threshold)?;
        let soft = linear.where_(0.0, &bx)?.exp()?.log1p()?.div(beta)?;
        linear.where_(&x, &soft)
    }

    /// `x / (1 + |x|)`.
    #[track_caller]
    pub fn softsign(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.div(&x.abs()?.add(1.0)?)
    }

    /// `clamp(x / 6 + 1/2, 0, 1)`.
    #[track_caller]
    pub fn hardsigmoid(&self) -> Result<Tensor> {
        self.to_float()?.div(6.0)?.add(0.5)?.clamp(0.0, 1.0)
    }

    /// `x · hardsigmoid(x)`.
    #[track_caller]
    pub fn hardswish(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.mul(&x.hardsigmoid()?)
    }

    /// `clamp(x, min, max)` (PyTorch's `hardtanh(min_val, max_val)`).
    #[track_caller]
    pub fn hardtanh(&self, min: f64, max: f64) -> Result<Tensor> {
        self.to_float()?.clamp(min, max)
    }

    /// `clamp(x, 0, 6)`.
    #[track_caller]
    pub fn relu6(&self) -> Result<Tensor> {
        self.hardtanh(0.0, 6.0)
    }

    /// `x · tanh(softplus(x))`.
    #[track_caller]
    pub fn mish(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.mul(&x.softplus(1.0, 20.0)?.tanh()?)
    }

    /// `log(sigmoid(x)) = -softplus(-x)`, stable for large `|x|`.
    #[track_caller]
    pub fn logsigmoid(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        // -softplus(-x) = min(x, 0) - log1p(e^-|x|).
        x.minimum(0.0)?.sub(&x.abs()?.neg()?.exp()?.log1p()?)
    }

    /// `x · sigmoid(1.702 · x)`.
    #[track_caller]
    pub fn quick_gelu(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.mul(&x.mul(1.702)?.sigmoid()?)
    }

    /// `softmax(-x)` along `axis`.
    #[track_caller]
    pub fn softmin(&self, axis: isize) -> Result<Tensor> {
        self.axis("softmin", axis)?;
        self.to_float()?.neg()?.softmax(axis)
    }

    /// GELU with PyTorch's `approximate="tanh"`:
    /// `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`.
    #[track_caller]
    pub fn gelu_tanh(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let k = (2.0 / std::f64::consts::PI).sqrt();
        let inner = x.add(&x.mul(&x)?.mul(&x)?.mul(0.044_715)?)?.mul(k)?;
        x.mul(0.5)?.mul(&inner.tanh()?.add(1.0)?)
    }
}
