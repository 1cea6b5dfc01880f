//! Linear quantization: `QuantizeLinear`, `DequantizeLinear`,
//! `DynamicQuantizeLinear` for the integer types Morok has (8-, 16- and
//! 32-bit; the 4-bit and float8 types are not Morok dtypes).

use super::reduce::shape_along;
use super::{invalid, unsupported, OpCtx, OpError, OpFn, OpResult};
use crate::data::dtype_of;
use morok::{DType, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("QuantizeLinear", quantize_linear),
    ("DequantizeLinear", dequantize_linear),
    ("DynamicQuantizeLinear", dynamic_quantize_linear),
];

/// A scale or zero point shaped to broadcast against `x` (per tensor, or
/// per slice of `axis`).
fn broadcastable(ctx: &OpCtx<'_>, t: &Tensor, x: &Tensor) -> OpResult<Tensor> {
    if ctx.int("block_size", 0)? != 0 {
        unsupported!("blocked quantization");
    }
    if t.numel() == 1 {
        return Ok(t.try_reshape(&[])?);
    }
    if t.ndim() != 1 {
        invalid!("scale or zero point of shape {:?}", t.shape());
    }
    let axis = ctx.axis(ctx.int("axis", 1)?, x.ndim())?;
    Ok(t.try_reshape(&shape_along(x.ndim(), axis, t.numel()))?)
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
