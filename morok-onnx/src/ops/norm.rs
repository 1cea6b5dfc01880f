//! Normalizations: batch (inference), instance, layer, group, RMS, Lp,
//! mean-variance, and local response normalization. Statistics are taken
//! in `f32` at least, then the result is cast back to the input's dtype.

use super::nn::spatial_axes;
use super::shape::pad_axes;
use super::{invalid, unsupported, OpCtx, OpFn, OpResult};
use morok::{DType, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("BatchNormalization", batch_normalization),
    ("InstanceNormalization", instance_normalization),
    ("LayerNormalization", layer_normalization),
    ("GroupNormalization", group_normalization),
    ("RMSNormalization", rms_normalization),
    ("LpNormalization", lp_normalization),
    ("MeanVarianceNormalization", mean_variance_normalization),
    ("LRN", lrn),
];

/// A per-channel vector shaped to broadcast over `[N, C, ...]`.
fn per_channel(v: &Tensor, rank: usize) -> OpResult<Tensor> {
    let mut dims = vec![1isize; rank];
    if rank > 1 {
        dims[1] = -1;
    } else {
        dims[0] = -1;
    }
    Ok(v.reshape(&dims)?)
}

fn batch_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if ctx.int("training_mode", 0)? != 0 || (ctx.opset < 7 && ctx.int("is_test", 0)? == 0) {
        unsupported!("training-mode batch normalization");
    }
    let eps = ctx.float("epsilon", 1e-5)? as f64;
    let rank = x.ndim();
    let [scale, bias, mean, var] =
        [1, 2, 3, 4].map(|i| ctx.input(i).and_then(|t| per_channel(t, rank)));
    let xf = x.cast(DType::F32)?;
    let norm = xf.sub(&mean?)?.mul(&var?.add(eps)?.rsqrt()?)?;
    let out = norm.mul(&scale?)?.add(&bias?)?;
    Ok(vec![out.cast(x.dtype())?])
}

/// `(x - mean) / sqrt(var + eps)` over `axes`, with the mean and the
/// inverse standard deviation (kept dims), computed in `f32` at least.
fn standardize(x: &Tensor, axes: &[isize], eps: f64) -> OpResult<(Tensor, Tensor, Tensor)> {
    let xf = if x.dtype() == DType::F64 {
        x.clone()
    } else {
        x.cast(DType::F32)?
    };
    let mean = xf.mean(Some(axes), true)?;
    let centered = xf.sub(&mean)?;
    let var = centered.mul(&centered)?.mean(Some(axes), true)?;
    let inv = var.add(eps)?.rsqrt()?;
    Ok((centered.mul(&inv)?, mean, inv))
}

fn instance_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let eps = ctx.float("epsilon", 1e-5)? as f64;
    let (norm, _, _) = standardize(x, &spatial_axes(x), eps)?;
    let out = norm
        .mul(&per_channel(ctx.input(1)?, x.ndim())?)?
        .add(&per_channel(ctx.input(2)?, x.ndim())?)?;
    Ok(vec![out.cast(x.dtype())?])
}

/// The axes from the `axis` attribute (default -1) to the last, and the
/// `epsilon` attribute (default 1e-5): what layer and RMS normalization
/// normalize over.
fn trailing_axes_and_eps(ctx: &OpCtx<'_>, x: &Tensor) -> OpResult<(Vec<isize>, f64)> {
    let axis = ctx.axis(ctx.int("axis", -1)?, x.ndim())?;
    let eps = ctx.float("epsilon", 1e-5)? as f64;
    Ok(((axis as isize..x.ndim() as isize).collect(), eps))
}

fn layer_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let (axes, eps) = trailing_axes_and_eps(ctx, x)?;
    let (norm, mean, inv) = standardize(x, &axes, eps)?;
    let mut out = norm.mul(ctx.input(1)?)?;
    if let Some(b) = ctx.opt(2) {
        out = out.add(b)?;
    }
    Ok(vec![out.cast(x.dtype())?, mean, inv])
}

fn group_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    if x.ndim() < 2 {
        invalid!("input of shape {:?}", x.shape());
    }
    let groups = ctx.int("num_groups", 0)?;
    let eps = ctx.float("epsilon", 1e-5)? as f64;
    let (n, c) = (x.shape()[0], x.shape()[1]);
    if groups <= 0 || c % groups as usize != 0 {
        invalid!("num_groups {groups} for {c} channels");
    }
    let g = groups as usize;
    let grouped = x.reshape(&[n as isize, g as isize, -1])?;
    let (norm, _, _) = standardize(&grouped, &[2], eps)?;
    let dims: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    let norm = norm.reshape(&dims)?;
    let widen = |t: &Tensor| -> OpResult<Tensor> {
        let t = if t.numel() == g && g != c {
            t.repeat_interleave(c / g, Some(0))?
        } else {
            t.clone()
        };
        per_channel(&t, x.ndim())
    };
    let out = norm
        .mul(&widen(ctx.input(1)?)?)?
        .add(&widen(ctx.input(2)?)?)?;
    Ok(vec![out.cast(x.dtype())?])
}

fn rms_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let (axes, eps) = trailing_axes_and_eps(ctx, x)?;
    let xf = if x.dtype() == DType::F64 {
        x.clone()
    } else {
        x.cast(DType::F32)?
    };
    let inv = xf.mul(&xf)?.mean(Some(&axes), true)?.add(eps)?.rsqrt()?;
    let out = xf.mul(&inv)?.mul(ctx.input(1)?)?;
    Ok(vec![out.cast(x.dtype())?])
}

fn lp_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let axis = ctx.axis(ctx.int("axis", -1)?, x.ndim())? as isize;
    let norm = match ctx.int("p", 2)? {
        1 => x.abs()?.sum(Some(&[axis]), true)?,
        2 => x.mul(x)?.sum(Some(&[axis]), true)?.sqrt()?,
        p => invalid!("p = {p}, expected 1 or 2"),
    };
    Ok(vec![x.div(&norm)?.cast(x.dtype())?])
}

fn mean_variance_normalization(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let axes: Vec<isize> = match ctx.ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&a| ctx.axis(a, x.ndim()).map(|v| v as isize))
            .collect::<OpResult<_>>()?,
        None => vec![0, 2, 3],
    };
    let mean = x.mean(Some(&axes), true)?;
    let centered = x.sub(&mean)?;
    let std = centered.mul(&centered)?.mean(Some(&axes), true)?.sqrt()?;
    Ok(vec![centered.div(&std.add(1e-9)?)?.cast(x.dtype())?])
}

fn lrn(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let size = ctx.int("size", 0)?;
    if size <= 0 || x.ndim() < 3 {
        invalid!("size {size} for input {:?}", x.shape());
    }
    let size = size as usize;
    let alpha = ctx.float("alpha", 1e-4)? as f64;
    let beta = ctx.float("beta", 0.75)? as f64;
    let bias = ctx.float("bias", 1.0)? as f64;
    let c = x.shape()[1];
    let sq = x.mul(x)?;
    let (before, after) = ((size - 1) / 2, size - 1 - (size - 1) / 2);
    let mut pads = vec![(0isize, 0isize); x.ndim()];
    pads[1] = (before as isize, after as isize);
    let padded = pad_axes(&sq, &pads, "constant", 0.0)?;
    let mut window = sq.zeros_like()?;
    for k in 0..size {
        let mut bounds: Vec<(usize, usize)> = padded.shape().iter().map(|&d| (0, d)).collect();
        bounds[1] = (k, k + c);
        window = window.add(&padded.shrink(&bounds)?)?;
    }
    let denom = window.mul(alpha / size as f64)?.add(bias)?.pow(beta)?;
    Ok(vec![x.div(&denom)?.cast(x.dtype())?])
}
