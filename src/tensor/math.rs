//! Math ops composed of the IR's ALU ops: hyperbolic and inverse
//! trigonometric functions, accurate `log1p`/`expm1`, `copysign`, `fmod`,
//! division with a rounding mode, `lerp`, `logaddexp`, closeness tests,
//! bitwise ops and shifts, and sums in a chosen dtype.
//!
//! `atan` (and `asin`, `acos`, `atan2` built on it) reduces its argument
//! to `|u| <= tan(π/8)` (with `atan(x) = π/2 - atan(1/x)` and
//! `atan(t) = π/4 + atan((t-1)/(t+1))`) and sums the odd Taylor series to
//! `u^23`: the truncation error is below `1e-10`, far under `f32`'s
//! rounding and about `1e-10` absolute in `f64`.

use super::elementwise::{Binary, Rule};
use super::{IntoOperand, Tensor};
use crate::error::{Error, Result};
pub use morok_core::tensor_ops::RoundingMode;
use morok_core::uop::{Op, ReduceOp};
use morok_core::{DType, ScalarType};
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, LN_2, PI};

/// The tolerances of [`Tensor::isclose`] and [`Tensor::allclose`], named
/// so they cannot be swapped: `|a - b| <= atol + rtol·|b|`. The default is
/// PyTorch's (`rtol = 1e-5`, `atol = 1e-8`, NaN never close).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IsCloseOptions {
    /// The tolerance relative to `|other|`.
    pub rtol: f64,
    /// The absolute tolerance.
    pub atol: f64,
    /// Whether NaN is close to NaN.
    pub equal_nan: bool,
}

impl Default for IsCloseOptions {
    fn default() -> Self {
        IsCloseOptions {
            rtol: 1e-5,
            atol: 1e-8,
            equal_nan: false,
        }
    }
}

impl Tensor {
    /// `atan` of a float tensor (see the module docs for the method).
    ///
    /// Written for its gradient too: `|x|` is `x · s` with the sign `s`
    /// (±1, 1 at 0) a constant to the gradient, not `ABS`, whose gradient
    /// at 0 is 0 (`atan'(0)` would come out 0, not 1); and the reciprocal
    /// is taken of 1 where it is not used, so that its gradient there is 0
    /// and not `0 · ∞ = NaN` (at `x = 0`).
    #[track_caller]
    fn atan_float(&self) -> Result<Tensor> {
        let sign = self
            .lt(0.0)?
            .where_(&self.filled(-1.0)?, &self.filled(1.0)?)?;
        let t = self.mul(&sign)?;
        let big = t.gt(1.0)?;
        let t = big.where_(&big.where_(&t, 1.0)?.reciprocal()?, &t)?;
        let mid = t.gt(std::f64::consts::SQRT_2 - 1.0)?;
        let u = mid.where_(&t.sub(1.0)?.div(&t.add(1.0)?)?, &t)?;
        let u2 = u.mul(&u)?;
        // Horner over 1/1 - u²/3 + u⁴/5 - ... to u^22/23.
        let mut acc = u2.filled(0.0)?;
        for k in (0..12).rev() {
            let c = if k % 2 == 0 { 1.0 } else { -1.0 } / (2 * k + 1) as f64;
            acc = acc.mul(&u2)?.add(c)?;
        }
        let r = acc.mul(&u)?;
        let r = mid.where_(&r.add(FRAC_PI_4)?, &r)?;
        let r = big.where_(&r.neg()?.add(FRAC_PI_2)?, &r)?;
        // atan is odd; a NaN input stays NaN through the selections.
        r.mul(&sign)
    }

    /// `sinh(x) = (e^x - e^-x) / 2` (integers become `f32`).
    #[track_caller]
    pub fn sinh(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.exp()?.sub(&x.neg()?.exp()?)?.mul(0.5)
    }

    /// `cosh(x) = (e^x + e^-x) / 2`.
    #[track_caller]
    pub fn cosh(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.exp()?.add(&x.neg()?.exp()?)?.mul(0.5)
    }

    /// `asinh(x) = sign(x) · log(|x| + sqrt(x² + 1))`, with `|x|` as `x ·
    /// sign(x)` (the sign ±1, 1 at 0, a constant to the gradient), not
    /// `ABS`, whose gradient at 0 is 0: `asinh'(0) = 1`.
    #[track_caller]
    pub fn asinh(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let sign = x.lt(0.0)?.where_(&x.filled(-1.0)?, &x.filled(1.0)?)?;
        let a = x.mul(&sign)?;
        let r = a.add(&a.mul(&a)?.add(1.0)?.sqrt()?)?.log()?;
        r.mul(&sign)
    }

    /// `acosh(x) = log(x + sqrt(x² - 1))` (NaN below 1).
    #[track_caller]
    pub fn acosh(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.add(&x.mul(&x)?.sub(1.0)?.sqrt()?)?.log()
    }

    /// `atanh(x) = log((1 + x) / (1 - x)) / 2`.
    #[track_caller]
    pub fn atanh(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.add(1.0)?.div(&x.neg()?.add(1.0)?)?.log()?.mul(0.5)
    }

    /// Arc tangent.
    #[track_caller]
    pub fn atan(&self) -> Result<Tensor> {
        self.to_float()?.atan_float()
    }

    /// Arc sine, `atan(x / sqrt(1 - x²))` (NaN outside `[-1, 1]`).
    #[track_caller]
    pub fn asin(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let c = x.mul(&x)?.neg()?.add(1.0)?.sqrt()?;
        let edge = c.eq(0.0)?;
        let r = x.div(&c)?.atan_float()?;
        // At ±1 the quotient is infinite: atan gives ±π/2 already unless
        // x/0 is NaN (x = 0 cannot happen there).
        edge.where_(&x.mul(FRAC_PI_2)?, &r)
    }

    /// Arc cosine, `π/2 - asin(x)`.
    #[track_caller]
    pub fn acos(&self) -> Result<Tensor> {
        self.asin()?.neg()?.add(FRAC_PI_2)
    }

    /// `atan2(self, other)`: the angle of the point `(other, self)`, in
    /// `[-π, π]`, with the quadrant of the signs (as C's `atan2` for
    /// finite inputs; signed zeros are not distinguished).
    ///
    /// On the axis `x = 0` the value is `±π/2` by the sign of `y` (0 where
    /// `y = 0` too), written as `±π/2 - x / y`: the same value there, and
    /// the gradient of `atan2` (`-1/y` to `x`, 0 to `y`). The quotient
    /// `y / x` not taken there divides by 1 instead, so that its gradient
    /// is 0 and not `0 / 0 = NaN`.
    #[track_caller]
    pub fn atan2(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (y, x) = self.float_pair("atan2", other)?;
        let x_zero = x.eq(0.0)?;
        let y_zero = y.eq(0.0)?;
        let base = y.div(&x_zero.where_(1.0, &x)?)?.atan_float()?;
        // The constants in the operands' dtype (two scalars would be f64).
        let (half_pi, pi) = (y.filled(FRAC_PI_2)?, y.filled(PI)?);
        let y_neg = y.lt(0.0)?;
        let shift = y_neg.where_(&pi.neg()?, &pi)?;
        let r = x.lt(0.0)?.where_(&base.add(&shift)?, &base)?;
        let tangent = y_neg
            .where_(&half_pi.neg()?, &half_pi)?
            .sub(&x.div(&y_zero.where_(1.0, &y)?)?)?;
        let axis = y_zero.where_(0.0, &tangent)?;
        x_zero.where_(&axis, &r)
    }

    /// Both operands as one float dtype and shape; errors name `op`.
    #[track_caller]
    fn float_pair(&self, op: &str, other: impl IntoOperand) -> Result<(Tensor, Tensor)> {
        Tensor::coerce(self.into_operand(), other.into_operand(), op, Rule::Float)
    }

    /// Base-10 logarithm.
    #[track_caller]
    pub fn log10(&self) -> Result<Tensor> {
        self.log2()?.mul(LN_2 / std::f64::consts::LN_10)
    }

    /// `log(1 + x)`, accurate for small `x`: `log(u) · x / (u - 1)` with
    /// `u = 1 + x` (exactly `x` where `u` rounds to 1). There the quotient
    /// is not taken and divides by 1 instead of 0, so that the gradient
    /// of the branch not taken is 0, not `0 · ∞ = NaN` (at `x = 0`, and
    /// for `log1p(e^-|x|)` in `logsigmoid` and `softplus` at large `|x|`).
    #[track_caller]
    pub fn log1p(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let u = x.add(1.0)?;
        let d = u.sub(1.0)?;
        let exact = d.eq(0.0)?;
        let r = u.log()?.mul(&x.div(&exact.where_(1.0, &d)?)?)?;
        let r = u.isinf()?.where_(&u, &r)?;
        exact.where_(&x, &r)
    }

    /// `e^x - 1`, accurate for small `x`: `(u - 1) · x / log(u)` with
    /// `u = e^x` (exactly `x` where `u` rounds to 1, and -1 or ∞ where
    /// `u - 1` is). Where the quotient is not taken it is computed from
    /// the stand-ins `x = 1`, `u = 2`, so that the gradient of that branch
    /// is 0 there, not `0 · ∞ = NaN` (at `x = 0`, and where `u` is 0).
    #[track_caller]
    pub fn expm1(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let u = x.exp()?;
        let d = u.sub(1.0)?;
        let exact = d.eq(0.0)?;
        let direct = d.eq(-1.0)?.logical_or(&u.isinf()?)?;
        let unused = exact.logical_or(&direct)?;
        let (xs, us) = (unused.where_(1.0, &x)?, unused.where_(2.0, &u)?);
        let r = us.sub(1.0)?.mul(&xs.div(&us.log()?)?)?;
        let r = direct.where_(&d, &r)?;
        exact.where_(&x, &r)
    }

    /// `|self|` with the sign of `other` (a negative zero counts as
    /// negative, as in C).
    #[track_caller]
    pub fn copysign(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.float_pair("copysign", other)?;
        let negative = b
            .lt(0.0)?
            .logical_or(&b.eq(0.0)?.logical_and(&b.reciprocal()?.lt(0.0)?)?)?;
        let m = a.abs()?;
        negative.where_(&m.neg()?, &m)
    }

    /// C's `fmod`: the remainder with the sign of the dividend (PyTorch's
    /// `fmod`). Floats compute `a - trunc(a / b) · b`; integers use the
    /// IR's MOD, and a zero integer divisor gives 0.
    #[track_caller]
    pub fn fmod(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.numeric_pair("fmod", other)?;
        if a.graph()?.dtype.is_float() {
            let q = Tensor::alu(Op::Fdiv, &[&a, &b])?.trunc()?;
            return a.sub(&q.mul(&b)?);
        }
        a.guarded_int(&b, Op::Mod)
    }

    /// Both operands promoted to one (non-bool) dtype and shape; errors
    /// name `op`.
    #[track_caller]
    fn numeric_pair(&self, op: &str, other: impl IntoOperand) -> Result<(Tensor, Tensor)> {
        let (a, b) = Tensor::coerce(self.into_operand(), other.into_operand(), op, Rule::Promote)?;
        if a.graph()?.dtype.is_bool() {
            return Err(Error::dtype(op, "not defined for bool tensors"));
        }
        Ok((a, b))
    }

    /// `a op b` for the integer IDIV or MOD, 0 where `b` is 0 (C leaves
    /// it undefined; the divisor is replaced by 1 there).
    #[track_caller]
    fn guarded_int(&self, b: &Tensor, op: Op) -> Result<Tensor> {
        let zero = b.filled(0.0)?;
        let is_zero = Tensor::alu(Op::CmpEq, &[b, &zero])?;
        let safe = Tensor::alu(Op::Where, &[&is_zero, &b.filled(1.0)?, b])?;
        let r = Tensor::alu(op, &[self, &safe])?;
        Tensor::alu(Op::Where, &[&is_zero, &self.filled(0.0)?, &r])
    }

    /// PyTorch's `div(other, rounding_mode)`: true division, or the
    /// quotient rounded toward zero or negative infinity (integers stay
    /// integers for those two; a zero integer divisor gives 0 when
    /// truncating). Errors name `div_mode` whatever the mode.
    #[track_caller]
    pub fn div_mode(&self, other: impl IntoOperand, mode: RoundingMode) -> Result<Tensor> {
        let op = "div_mode";
        let (lhs, rhs) = (self.into_operand(), other.into_operand());
        match mode {
            RoundingMode::None => Tensor::binary_as(op, lhs, rhs, Binary::Div),
            RoundingMode::Floor => Tensor::binary_as(op, lhs, rhs, Binary::FloorDiv),
            RoundingMode::Trunc => {
                let (a, b) = self.numeric_pair(op, rhs)?;
                let dtype = a.graph()?.dtype;
                if dtype.is_float() {
                    return Tensor::alu(Op::Fdiv, &[&a, &b])?.trunc();
                }
                a.guarded_int(&b, Op::Idiv)
            }
        }
    }

    /// `self + weight · (end - self)`, in floats (integers become
    /// `f32`); `self`, `end` and `weight` broadcast.
    #[track_caller]
    pub fn lerp(&self, end: &Tensor, weight: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.float_pair("lerp", end)?;
        let (a, w) = a.float_pair("lerp", weight)?;
        let (b, _) = b.float_pair("lerp", &w)?;
        a.add(&b.sub(&a)?.mul(&w)?)
    }

    /// `log(e^a + e^b)`, computed as `m + log(e^(a-m) + e^(b-m))` with
    /// `m = max(a, b)` (and `m` itself where `m` is infinite).
    #[track_caller]
    pub fn logaddexp(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.float_pair("logaddexp", other)?;
        let m = a.maximum(&b)?;
        let s = a.sub(&m)?.exp()?.add(&b.sub(&m)?.exp()?)?.log()?.add(&m)?;
        m.isinf()?.where_(&m, &s)
    }

    /// PyTorch's `isclose`: `|a - b| <= atol + rtol · |b|` with a finite
    /// difference, or equal (infinities of one sign), or both NaN when
    /// `equal_nan` (`IsCloseOptions::default()` is PyTorch's tolerances).
    #[track_caller]
    pub fn isclose(&self, other: impl IntoOperand, opts: IsCloseOptions) -> Result<Tensor> {
        let IsCloseOptions {
            rtol,
            atol,
            equal_nan,
        } = opts;
        let (a, b) = self.float_pair("isclose", other)?;
        // PyTorch's rule: equal, or a finite difference within the
        // tolerance (with an infinite `other` the tolerance is infinite
        // too, and `inf <= inf` must not make `5` close to `inf`).
        let diff = a.sub(&b)?.abs()?;
        let near = diff
            .le(&b.abs()?.mul(rtol)?.add(atol)?)?
            .logical_and(&diff.isfinite()?)?;
        let close = near.logical_or(&a.eq(&b)?)?;
        if equal_nan {
            close.logical_or(&a.isnan()?.logical_and(&b.isnan()?)?)
        } else {
            Ok(close)
        }
    }

    /// PyTorch's `allclose`: whether [`Tensor::isclose`] holds everywhere
    /// (realizes the result).
    #[track_caller]
    pub fn allclose(&self, other: impl IntoOperand, opts: IsCloseOptions) -> Result<bool> {
        let all = self.isclose(other, opts)?.all(None, false)?;
        Ok(all.to_vec::<bool>()?.first().copied().unwrap_or(true))
    }

    /// True where the element is neither infinite nor NaN (always true
    /// for integers and bools).
    #[track_caller]
    pub fn isfinite(&self) -> Result<Tensor> {
        if !self.graph()?.dtype.is_float() {
            let shape = self.shape().to_vec();
            return Ok(Tensor::constant(
                morok_core::ConstValue::Bool(true),
                ScalarType::Bool,
                &shape,
            ));
        }
        self.isnan()?.logical_or(&self.isinf()?)?.logical_not()
    }

    /// True where the element is `+∞` (`isposinf`).
    #[track_caller]
    pub fn isposinf(&self) -> Result<Tensor> {
        self.isinf()?.logical_and(&self.gt(0)?)
    }

    /// True where the element is `-∞` (`isneginf`).
    #[track_caller]
    pub fn isneginf(&self) -> Result<Tensor> {
        self.isinf()?.logical_and(&self.lt(0)?)
    }

    /// The integer or bool operands of a bitwise op, in one dtype and
    /// shape; floats are a dtype error of `op`.
    #[track_caller]
    fn bitwise_pair(&self, op: &str, other: impl IntoOperand) -> Result<(Tensor, Tensor)> {
        let (a, b) = Tensor::coerce(self.into_operand(), other.into_operand(), op, Rule::Promote)?;
        let dtype = a.graph()?.dtype;
        if dtype.is_float() {
            return Err(Error::dtype(
                op,
                format!(
                    "needs integer or bool tensors, not {dtype} ({:?})",
                    self.shape()
                ),
            ));
        }
        Ok((a, b))
    }

    /// Bitwise AND of integers (logical AND of bools).
    #[track_caller]
    pub fn bitwise_and(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.bitwise_pair("bitwise_and", other)?;
        Tensor::alu(Op::And, &[&a, &b])
    }

    /// Bitwise OR of integers (logical OR of bools).
    #[track_caller]
    pub fn bitwise_or(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.bitwise_pair("bitwise_or", other)?;
        Tensor::alu(Op::Or, &[&a, &b])
    }

    /// Bitwise XOR of integers (logical XOR of bools).
    #[track_caller]
    pub fn bitwise_xor(&self, other: impl IntoOperand) -> Result<Tensor> {
        let (a, b) = self.bitwise_pair("bitwise_xor", other)?;
        Tensor::alu(Op::Xor, &[&a, &b])
    }

    /// Bitwise NOT of integers (logical NOT of bools).
    #[track_caller]
    pub fn bitwise_not(&self) -> Result<Tensor> {
        let (a, _) = self.bitwise_pair("bitwise_not", false)?;
        Tensor::alu(Op::Not, &[&a])
    }

    /// `self << other` on integers. A shift by a negative amount or by
    /// the bit width or more gives 0 (C leaves it undefined).
    #[track_caller]
    pub fn bitwise_left_shift(&self, other: impl IntoOperand) -> Result<Tensor> {
        self.shift("bitwise_left_shift", other, Op::Shl)
    }

    /// `self >> other` on integers (arithmetic for signed types). A shift
    /// by a negative amount or by the bit width or more gives what
    /// shifting by `width - 1` gives (0, or -1 for negative values).
    #[track_caller]
    pub fn bitwise_right_shift(&self, other: impl IntoOperand) -> Result<Tensor> {
        self.shift("bitwise_right_shift", other, Op::Shr)
    }

    #[track_caller]
    fn shift(&self, op: &str, other: impl IntoOperand, alu: Op) -> Result<Tensor> {
        let (a, b) = self.bitwise_pair(op, other)?;
        let dtype = a.graph()?.dtype;
        if dtype.is_bool() {
            return Err(Error::dtype(op, "not defined for bool tensors"));
        }
        let width = f64::from(dtype.bits());
        let bad = b
            .lt(&b.filled(0.0)?)?
            .logical_or(&b.ge(&b.filled(width)?)?)?;
        let safe = bad.where_(&b.filled(0.0)?, &b)?;
        let shifted = Tensor::alu(alu, &[&a, &safe])?;
        if alu == Op::Shl {
            bad.where_(&a.filled(0.0)?, &shifted)
        } else {
            let last = Tensor::alu(alu, &[&a, &a.filled(width - 1.0)?])?;
            bad.where_(&last, &shifted)
        }
    }

    /// `sum` over `axes` accumulated and returned in `dtype` (PyTorch's
    /// `dtype=` argument): the input is cast first.
    #[track_caller]
    pub fn sum_dtype(&self, axes: Option<&[isize]>, keepdim: bool, dtype: DType) -> Result<Tensor> {
        self.reduce_in("sum_dtype", axes, keepdim, dtype, ReduceOp::Add)
    }

    /// `prod` over `axes` in `dtype`, like [`Tensor::sum_dtype`].
    #[track_caller]
    pub fn prod_dtype(
        &self,
        axes: Option<&[isize]>,
        keepdim: bool,
        dtype: DType,
    ) -> Result<Tensor> {
        self.reduce_in("prod_dtype", axes, keepdim, dtype, ReduceOp::Mul)
    }

    #[track_caller]
    fn reduce_in(
        &self,
        op: &str,
        axes: Option<&[isize]>,
        keepdim: bool,
        dtype: DType,
        how: ReduceOp,
    ) -> Result<Tensor> {
        let t = super::creation::element_type(op, dtype)?;
        let axes = self.reduce_axes(op, axes)?;
        let x = self.cast_to(t)?;
        if t == ScalarType::Bool {
            let how = if how == ReduceOp::Add {
                ReduceOp::Max
            } else {
                ReduceOp::Min
            };
            return x.reduce_to(how, &axes, keepdim);
        }
        x.reduce_to(how, &axes, keepdim)
    }
}
