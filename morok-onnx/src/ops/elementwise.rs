//! Elementwise ops: arithmetic with NumPy broadcasting, comparisons and
//! logic, unary math, activations, `Where`, `Clip`, `Cast`.
//!
//! ONNX keeps the input's element type where the tensor API would promote
//! (integer `Div`, `Pow` of an integer base, sums of small integers), so
//! those results are cast back to it.

use super::{host_scalar, invalid, unsupported, OpCtx, OpFn, OpResult};
use crate::data::dtype_of;
use morok::{DType, RoundingMode, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("Add", add),
    ("Sub", sub),
    ("Mul", mul),
    ("Div", div),
    ("Pow", pow),
    ("Mod", modulo),
    ("Max", max),
    ("Min", min),
    ("Sum", sum),
    ("Mean", mean),
    ("Equal", equal),
    ("Less", less),
    ("LessOrEqual", less_or_equal),
    ("Greater", greater),
    ("GreaterOrEqual", greater_or_equal),
    ("And", and),
    ("Or", or),
    ("Xor", xor),
    ("Not", not),
    ("BitwiseAnd", bitwise_and),
    ("BitwiseOr", bitwise_or),
    ("BitwiseXor", bitwise_xor),
    ("BitwiseNot", bitwise_not),
    ("BitShift", bit_shift),
    ("Abs", abs),
    ("Neg", neg),
    ("Sign", sign),
    ("Exp", exp),
    ("Log", log),
    ("Sqrt", sqrt),
    ("Reciprocal", reciprocal),
    ("Sin", sin),
    ("Cos", cos),
    ("Tan", tan),
    ("Asin", asin),
    ("Acos", acos),
    ("Atan", atan),
    ("Sinh", sinh),
    ("Cosh", cosh),
    ("Tanh", tanh),
    ("Asinh", asinh),
    ("Acosh", acosh),
    ("Atanh", atanh),
    ("Erf", erf),
    ("Floor", floor),
    ("Ceil", ceil),
    ("Round", round),
    ("IsNaN", is_nan),
    ("IsInf", is_inf),
    ("Relu", relu),
    ("LeakyRelu", leaky_relu),
    ("PRelu", prelu),
    ("Elu", elu),
    ("Selu", selu),
    ("Celu", celu),
    ("Sigmoid", sigmoid),
    ("HardSigmoid", hard_sigmoid),
    ("HardSwish", hard_swish),
    ("Softplus", softplus),
    ("Softsign", softsign),
    ("Mish", mish),
    ("Gelu", gelu),
    ("Swish", swish),
    ("ThresholdedRelu", thresholded_relu),
    ("Shrink", shrink),
    ("Where", where_),
    ("Clip", clip),
    ("Cast", cast),
    ("CastLike", cast_like),
    ("Identity", identity),
    ("Dropout", dropout),
];

/// `t` cast to `like`'s dtype.
fn as_dtype_of(t: Tensor, like: &Tensor) -> OpResult<Tensor> {
    Ok(t.cast(like.dtype())?)
}

/// A binary op whose result keeps the first input's dtype.
fn binary(ctx: &OpCtx<'_>, f: fn(&Tensor, &Tensor) -> morok::Result<Tensor>) -> OpResult {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    Ok(vec![as_dtype_of(f(a, b)?, a)?])
}

/// A binary op whose result is what the tensor API gives (comparisons,
/// logic).
fn binary_raw(ctx: &OpCtx<'_>, f: fn(&Tensor, &Tensor) -> morok::Result<Tensor>) -> OpResult {
    Ok(vec![f(ctx.input(0)?, ctx.input(1)?)?])
}

/// A unary op whose result keeps the input's dtype.
fn unary(ctx: &OpCtx<'_>, f: fn(&Tensor) -> morok::Result<Tensor>) -> OpResult {
    let x = ctx.input(0)?;
    Ok(vec![as_dtype_of(f(x)?, x)?])
}

/// A unary op defined on floats only.
fn float_unary(ctx: &OpCtx<'_>, f: fn(&Tensor) -> morok::Result<Tensor>) -> OpResult {
    let x = ctx.input(0)?;
    if !x.dtype().is_float() {
        invalid!("{} input, expected a float tensor", x.dtype());
    }
    unary(ctx, f)
}

fn add(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| a.add(b))
}
fn sub(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| a.sub(b))
}
fn mul(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| a.mul(b))
}
fn div(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| {
        if a.dtype().is_float() {
            a.div(b)
        } else {
            a.div_mode(b, RoundingMode::Trunc)
        }
    })
}

fn pow(ctx: &OpCtx<'_>) -> OpResult {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    let p = a.cast(DType::F64)?.pow(&b.cast(DType::F64)?)?;
    let p = if a.dtype().is_float() { p } else { p.round()? };
    Ok(vec![as_dtype_of(p, a)?])
}

fn modulo(ctx: &OpCtx<'_>) -> OpResult {
    if ctx.int("fmod", 0)? == 1 {
        binary(ctx, |a, b| a.fmod(b))
    } else {
        binary(ctx, |a, b| a.remainder(b))
    }
}

/// A variadic op folded left to right with broadcasting.
fn variadic(ctx: &OpCtx<'_>, f: fn(&Tensor, &Tensor) -> morok::Result<Tensor>) -> OpResult<Tensor> {
    let mut inputs = ctx.inputs.iter().flatten();
    let Some(first) = inputs.next() else {
        invalid!("needs at least one input");
    };
    let mut acc = first.clone();
    for t in inputs {
        acc = f(&acc, t)?;
    }
    as_dtype_of(acc, first)
}

fn max(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![variadic(ctx, |a, b| a.maximum(b))?])
}
fn min(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![variadic(ctx, |a, b| a.minimum(b))?])
}
fn sum(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![variadic(ctx, |a, b| a.add(b))?])
}
fn mean(ctx: &OpCtx<'_>) -> OpResult {
    let total = variadic(ctx, |a, b| a.add(b))?;
    let n = ctx.inputs.iter().flatten().count() as f64;
    Ok(vec![as_dtype_of(total.div(n)?, &total)?])
}

fn equal(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.eq(b))
}
fn less(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.lt(b))
}
fn less_or_equal(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.le(b))
}
fn greater(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.gt(b))
}
fn greater_or_equal(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.ge(b))
}
fn and(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.logical_and(b))
}
fn or(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.logical_or(b))
}
fn xor(ctx: &OpCtx<'_>) -> OpResult {
    binary_raw(ctx, |a, b| a.logical_xor(b))
}
fn not(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![ctx.input(0)?.logical_not()?])
}
fn bitwise_and(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| a.bitwise_and(b))
}
fn bitwise_or(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| a.bitwise_or(b))
}
fn bitwise_xor(ctx: &OpCtx<'_>) -> OpResult {
    binary(ctx, |a, b| a.bitwise_xor(b))
}
fn bitwise_not(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.bitwise_not())
}
fn bit_shift(ctx: &OpCtx<'_>) -> OpResult {
    match ctx.string("direction", "")?.as_str() {
        "LEFT" => binary(ctx, |a, b| a.bitwise_left_shift(b)),
        "RIGHT" => binary(ctx, |a, b| a.bitwise_right_shift(b)),
        other => invalid!("direction {other:?}, expected LEFT or RIGHT"),
    }
}

fn abs(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.abs())
}
fn neg(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.neg())
}
fn sign(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.sign())
}
fn exp(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.exp())
}
fn log(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.log())
}
fn sqrt(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.sqrt())
}
fn reciprocal(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.reciprocal())
}
fn sin(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.sin())
}
fn cos(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.cos())
}
fn tan(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.tan())
}
fn asin(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.asin())
}
fn acos(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.acos())
}
fn atan(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.atan())
}
fn sinh(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.sinh())
}
fn cosh(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.cosh())
}
fn tanh(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.tanh())
}
fn asinh(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.asinh())
}
fn acosh(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.acosh())
}
fn atanh(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.atanh())
}
fn erf(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.erf())
}
fn floor(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.floor())
}
fn ceil(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.ceil())
}
fn round(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.round())
}
fn is_nan(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![ctx.input(0)?.isnan()?])
}
fn is_inf(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let pos = ctx.int("detect_positive", 1)? != 0;
    let neg = ctx.int("detect_negative", 1)? != 0;
    let out = match (pos, neg) {
        (true, true) => x.isinf()?,
        (true, false) => x.isposinf()?,
        (false, true) => x.isneginf()?,
        (false, false) => x.isinf()?.logical_and(false)?,
    };
    Ok(vec![out])
}

fn relu(ctx: &OpCtx<'_>) -> OpResult {
    unary(ctx, |x| x.maximum(0))
}
fn leaky_relu(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 0.01)? as f64;
    let x = ctx.input(0)?;
    Ok(vec![as_dtype_of(x.leaky_relu(alpha)?, x)?])
}
fn prelu(ctx: &OpCtx<'_>) -> OpResult {
    let (x, slope) = (ctx.input(0)?, ctx.input(1)?);
    let out = x.lt(0)?.where_(x.mul(slope)?, x)?;
    Ok(vec![as_dtype_of(out, x)?])
}
fn elu(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 1.0)? as f64;
    let x = ctx.input(0)?;
    Ok(vec![as_dtype_of(x.elu(alpha)?, x)?])
}
fn selu(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 1.673_263_2)? as f64;
    let gamma = ctx.float("gamma", 1.050_701)? as f64;
    let x = ctx.input(0)?;
    let negative = x.exp()?.sub(1.0)?.mul(alpha)?;
    let out = x.gt(0)?.where_(x, negative)?.mul(gamma)?;
    Ok(vec![as_dtype_of(out, x)?])
}
fn celu(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 1.0)? as f64;
    let x = ctx.input(0)?;
    Ok(vec![as_dtype_of(x.celu(alpha)?, x)?])
}
fn sigmoid(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.sigmoid())
}
fn hard_sigmoid(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 0.2)? as f64;
    let beta = ctx.float("beta", 0.5)? as f64;
    let x = ctx.input(0)?;
    let out = x.mul(alpha)?.add(beta)?.clamp(0.0, 1.0)?;
    Ok(vec![as_dtype_of(out, x)?])
}
fn hard_swish(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let gate = x.mul(1.0 / 6.0)?.add(0.5)?.clamp(0.0, 1.0)?;
    Ok(vec![as_dtype_of(x.mul(&gate)?, x)?])
}
fn softplus(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let out = x.exp()?.add(1.0)?.log()?;
    Ok(vec![as_dtype_of(out, x)?])
}
fn softsign(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.softsign())
}
fn mish(ctx: &OpCtx<'_>) -> OpResult {
    float_unary(ctx, |x| x.mish())
}
fn gelu(ctx: &OpCtx<'_>) -> OpResult {
    match ctx.string("approximate", "none")?.as_str() {
        "none" => float_unary(ctx, |x| x.gelu()),
        "tanh" => float_unary(ctx, |x| x.gelu_tanh()),
        other => invalid!("approximate {other:?}, expected none or tanh"),
    }
}
fn swish(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 1.0)? as f64;
    let x = ctx.input(0)?;
    let out = x.mul(&x.mul(alpha)?.sigmoid()?)?;
    Ok(vec![as_dtype_of(out, x)?])
}
fn thresholded_relu(ctx: &OpCtx<'_>) -> OpResult {
    let alpha = ctx.float("alpha", 1.0)? as f64;
    let x = ctx.input(0)?;
    let out = x.gt(alpha)?.where_(x, 0.0)?;
    Ok(vec![as_dtype_of(out, x)?])
}
fn shrink(ctx: &OpCtx<'_>) -> OpResult {
    let bias = ctx.float("bias", 0.0)? as f64;
    let lambd = ctx.float("lambd", 0.5)? as f64;
    let x = ctx.input(0)?;
    let xf = x.cast(DType::F64)?;
    let low = xf.lt(-lambd)?.where_(xf.add(bias)?, 0.0)?;
    let out = xf.gt(lambd)?.where_(xf.sub(bias)?, &low)?;
    Ok(vec![as_dtype_of(out, x)?])
}

fn where_(ctx: &OpCtx<'_>) -> OpResult {
    let (c, a, b) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    Ok(vec![as_dtype_of(c.where_(a, b)?, a)?])
}

fn clip(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let (lo, hi) = if ctx.opset < 11 {
        (
            Some(ctx.float("min", f32::MIN)? as f64),
            Some(ctx.float("max", f32::MAX)? as f64),
        )
    } else {
        let lo = ctx.opt(1).map(host_scalar).transpose()?;
        let hi = ctx.opt(2).map(host_scalar).transpose()?;
        (lo, hi)
    };
    let mut out = x.clone();
    if let Some(lo) = lo {
        out = out.maximum(&Tensor::full(&[], lo).cast(x.dtype())?)?;
    }
    if let Some(hi) = hi {
        out = out.minimum(&Tensor::full(&[], hi).cast(x.dtype())?)?;
    }
    Ok(vec![as_dtype_of(out, x)?])
}

fn cast(ctx: &OpCtx<'_>) -> OpResult {
    let to = ctx.int("to", 0)?;
    let dtype = dtype_of(to as i32).map_err(super::OpError::Unsupported)?;
    Ok(vec![ctx.input(0)?.cast(dtype)?])
}
fn cast_like(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![ctx.input(0)?.cast(ctx.input(1)?.dtype())?])
}
fn identity(ctx: &OpCtx<'_>) -> OpResult {
    Ok(vec![ctx.input(0)?.clone()])
}

fn dropout(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let training = match ctx.opt(2) {
        Some(t) => host_scalar(t)? != 0.0,
        None => false,
    };
    if training {
        let ratio = match ctx.opt(1) {
            Some(r) => host_scalar(r)?,
            None => ctx.float("ratio", 0.5)? as f64,
        };
        if ratio != 0.0 {
            unsupported!("training-mode dropout with ratio {ratio} (random masks)");
        }
    }
    let mask = Tensor::full(x.shape(), true);
    Ok(vec![x.clone(), mask])
}
