//! Linear quantization: `QuantizeLinear`, `DequantizeLinear`,
//! `DynamicQuantizeLinear` for the integer types Morok has (8-, 16- and
//! 32-bit; the 4-bit and float8 types are not Morok dtypes), and the
//! integer / quantized `MatMul` and `Conv` forms, computed on the
//! dequantized (zero-point-shifted) values.

use super::reduce::shape_along;
use super::{invalid, unsupported, OpCtx, OpError, OpFn, OpResult};
use crate::data::dtype_of;
use morok::{DType, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("QuantizeLinear", quantize_linear),
    ("DequantizeLinear", dequantize_linear),
    ("DynamicQuantizeLinear", dynamic_quantize_linear),
    ("MatMulInteger", matmul_integer),
    ("QLinearMatMul", qlinear_matmul),
    ("ConvInteger", conv_integer),
];

/// A scale or zero point shaped to broadcast against `x` (per tensor, or
/// per slice of `axis`).
fn broadcastable(ctx: &OpCtx<'_>, t: &Tensor, x: &Tensor) -> OpResult<Tensor> {
    if ctx.int("block_size", 0)? != 0 {
        unsupported!("blocked quantization");
    }
    if t.numel() == 1 {
        return Ok(t.reshape(&[])?);
    }
    if t.ndim() != 1 {
        invalid!("scale or zero point of shape {:?}", t.shape());
    }
    let axis = ctx.axis(ctx.int("axis", 1)?, x.ndim())?;
    Ok(t.reshape(&shape_along(x.ndim(), axis, t.numel()))?)
}

fn quantize_linear(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let scale = broadcastable(ctx, ctx.input(1)?, x)?;
    let (zero, dtype) = match ctx.opt(2) {
        Some(z) => (Some(broadcastable(ctx, z, x)?), z.dtype()),
        None => {
            let dtype = match ctx.attr("output_dtype") {
                Some(a) if a.i.unwrap_or(0) != 0 => {
                    dtype_of(a.i.unwrap_or(0) as i32).map_err(OpError::Unsupported)?
                }
                _ => DType::U8,
            };
            (None, dtype)
        }
    };
    if !dtype.is_int() {
        unsupported!("quantizing to {dtype}");
    }
    let mut q = x.cast(DType::F32)?.div(&scale.cast(DType::F32)?)?.round()?;
    if let Some(z) = zero {
        q = q.add(&z.cast(DType::F32)?)?;
    }
    let s = dtype.scalar_type();
    let q = q.clamp(s.min_f64(), s.max_f64())?;
    Ok(vec![q.cast(dtype)?])
}

fn dequantize_linear(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let scale_in = ctx.input(1)?;
    let scale = broadcastable(ctx, scale_in, x)?;
    let mut v = x.cast(DType::F32)?;
    if let Some(z) = ctx.opt(2) {
        v = v.sub(&broadcastable(ctx, z, x)?.cast(DType::F32)?)?;
    }
    Ok(vec![v
        .mul(&scale.cast(DType::F32)?)?
        .cast(scale_in.dtype())?])
}

fn dynamic_quantize_linear(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?.cast(DType::F32)?;
    let lo = x.min(None, false)?.minimum(0.0f32)?;
    let hi = x.max(None, false)?.maximum(0.0f32)?;
    let scale = hi.sub(&lo)?.div(255.0f32)?;
    let zero = lo.neg()?.div(&scale)?.round()?.clamp(0.0f32, 255.0f32)?;
    let y = x
        .div(&scale)?
        .round()?
        .add(&zero)?
        .clamp(0.0f32, 255.0f32)?;
    Ok(vec![y.cast(DType::U8)?, scale, zero.cast(DType::U8)?])
}

/// `x - zero_point` as `f32`, with a per-row (`axis` 0 of a matrix) or
/// per-column zero point or scale shaped to broadcast.
fn shifted(x: &Tensor, zero: Option<&Tensor>, per_row: bool) -> OpResult<Tensor> {
    let xf = x.cast(DType::F32)?;
    let Some(z) = zero else {
        return Ok(xf);
    };
    Ok(xf.sub(&along(z, x, per_row)?.cast(DType::F32)?)?)
}

/// A scalar or 1-D per-row / per-column parameter of matrix `x`.
fn along(p: &Tensor, x: &Tensor, per_row: bool) -> OpResult<Tensor> {
    if p.numel() == 1 {
        return Ok(p.reshape(&[])?);
    }
    if p.ndim() != 1 || x.ndim() < 2 {
        invalid!(
            "parameter of shape {:?} for an operand of shape {:?}",
            p.shape(),
            x.shape()
        );
    }
    Ok(if per_row {
        p.reshape(&[-1, 1])?
    } else {
        p.reshape(&[1, -1])?
    })
}

fn matmul_integer(ctx: &OpCtx<'_>) -> OpResult {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    let prod = shifted(a, ctx.opt(2), true)?.matmul(&shifted(b, ctx.opt(3), false)?)?;
    Ok(vec![prod.cast(DType::I32)?])
}

fn qlinear_matmul(ctx: &OpCtx<'_>) -> OpResult {
    let (a, b) = (ctx.input(0)?, ctx.input(3)?);
    let (y_scale, y_zero) = (ctx.input(6)?, ctx.input(7)?);
    let deq = |x: &Tensor, scale: &Tensor, zero: &Tensor, per_row: bool| -> OpResult<Tensor> {
        Ok(shifted(x, Some(zero), per_row)?.mul(&along(scale, x, per_row)?.cast(DType::F32)?)?)
    };
    let a_real = deq(a, ctx.input(1)?, ctx.input(2)?, true)?;
    let b_real = deq(b, ctx.input(4)?, ctx.input(5)?, false)?;
    let y = a_real.matmul(&b_real)?;
    let q = y
        .div(&y_scale.cast(DType::F32)?.reshape(&[])?)?
        .round()?
        .add(&y_zero.cast(DType::F32)?.reshape(&[])?)?;
    let s = y_zero.dtype().scalar_type();
    Ok(vec![q
        .clamp(s.min_f64(), s.max_f64())?
        .cast(y_zero.dtype())?])
}

fn conv_integer(ctx: &OpCtx<'_>) -> OpResult {
    let (x, w) = (ctx.input(0)?, ctx.input(1)?);
    let xf = shifted(
        x,
        ctx.opt(2).map(|z| z.reshape(&[])).transpose()?.as_ref(),
        true,
    )?;
    let wf = match ctx.opt(3) {
        Some(z) if z.numel() > 1 => {
            let mut dims = vec![1isize; w.ndim()];
            dims[0] = -1;
            w.cast(DType::F32)?
                .sub(&z.cast(DType::F32)?.reshape(&dims)?)?
        }
        z => shifted(w, z.map(|z| z.reshape(&[])).transpose()?.as_ref(), true)?,
    };
    let out = super::nn::conv_of(ctx, &xf, &wf, None)?;
    Ok(vec![out.round()?.cast(DType::I32)?])
}
