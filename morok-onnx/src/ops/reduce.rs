//! Reductions (`Reduce*`, `ArgMax`/`ArgMin`), the softmax family,
//! `CumSum` and `TopK`.
//!
//! `Reduce*` take their axes from an attribute up to a version (13 for
//! `ReduceSum`, 18 for the others) and from an optional input after it;
//! no axes means all axes unless `noop_with_empty_axes` is set.

use super::{host_ints, host_scalar, invalid, OpCtx, OpFn, OpResult};
use morok::{DType, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("ReduceSum", reduce_sum),
    ("ReduceMean", reduce_mean),
    ("ReduceMax", reduce_max),
    ("ReduceMin", reduce_min),
    ("ReduceProd", reduce_prod),
    ("ReduceL1", reduce_l1),
    ("ReduceL2", reduce_l2),
    ("ReduceLogSum", reduce_log_sum),
    ("ReduceLogSumExp", reduce_log_sum_exp),
    ("ReduceSumSquare", reduce_sum_square),
    ("ArgMax", arg_max),
    ("ArgMin", arg_min),
    ("Softmax", softmax),
    ("LogSoftmax", log_softmax),
    ("Hardmax", hardmax),
    ("CumSum", cum_sum),
    ("TopK", top_k),
];

/// The axes a `Reduce*` node reduces (`None`: all; `Some(empty)`: none).
fn reduce_axes(ctx: &OpCtx<'_>, attr_until: i64) -> OpResult<Option<Vec<isize>>> {
    let rank = ctx.input(0)?.ndim();
    let axes = if ctx.opset < attr_until {
        ctx.ints("axes")?
    } else {
        ctx.opt(1).map(host_ints).transpose()?
    };
    let axes = axes.unwrap_or_default();
    if axes.is_empty() {
        return Ok(if ctx.int("noop_with_empty_axes", 0)? != 0 {
            Some(Vec::new())
        } else {
            None
        });
    }
    let mut out = Vec::with_capacity(axes.len());
    for a in axes {
        out.push(ctx.axis(a, rank)? as isize);
    }
    Ok(Some(out))
}

/// Applies a reduction `f(x, axes, keepdim)` per the node's axes and
/// `keepdims`, casting the result to `like`'s dtype.
fn reduce_with(
    ctx: &OpCtx<'_>,
    attr_until: i64,
    x: &Tensor,
    f: impl Fn(&Tensor, Option<&[isize]>, bool) -> morok::Result<Tensor>,
) -> OpResult<Tensor> {
    let keep = ctx.int("keepdims", 1)? != 0;
    let out = match reduce_axes(ctx, attr_until)? {
        Some(axes) if axes.is_empty() => x.clone(),
        Some(axes) => f(x, Some(&axes), keep)?,
        None if keep => {
            let all: Vec<isize> = (0..x.ndim() as isize).collect();
            f(x, Some(&all), true)?
        }
        None => f(x, None, false)?,
    };
    Ok(out)
}

fn finish(ctx: &OpCtx<'_>, t: Tensor) -> OpResult {
    Ok(vec![t.cast(ctx.input(0)?.dtype())?])
}

fn reduce_sum(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    finish(ctx, reduce_with(ctx, 13, x, |t, a, k| t.sum(a, k))?)
}
fn reduce_mean(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    finish(ctx, reduce_with(ctx, 18, x, |t, a, k| t.mean(a, k))?)
}
/// `x`, with bools as `u8` (max and min of bools reduce as 0/1).
fn bools_as_u8(x: &Tensor) -> OpResult<Tensor> {
    Ok(if x.dtype().is_bool() {
        x.cast(DType::U8)?
    } else {
        x.clone()
    })
}
fn reduce_max(ctx: &OpCtx<'_>) -> OpResult {
    let xs = bools_as_u8(ctx.input(0)?)?;
    finish(ctx, reduce_with(ctx, 18, &xs, |t, a, k| t.max(a, k))?)
}
fn reduce_min(ctx: &OpCtx<'_>) -> OpResult {
    let xs = bools_as_u8(ctx.input(0)?)?;
    finish(ctx, reduce_with(ctx, 18, &xs, |t, a, k| t.min(a, k))?)
}
fn reduce_prod(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    finish(ctx, reduce_with(ctx, 18, x, |t, a, k| t.prod(a, k))?)
}
fn reduce_l1(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?.abs()?;
    finish(ctx, reduce_with(ctx, 18, &x, |t, a, k| t.sum(a, k))?)
}
fn reduce_l2(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let sq = x.cast(DType::F64)?.mul(&x.cast(DType::F64)?)?;
    let s = reduce_with(ctx, 18, &sq, |t, a, k| t.sum(a, k))?.sqrt()?;
    finish(ctx, s)
}
fn reduce_log_sum(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    finish(ctx, reduce_with(ctx, 18, x, |t, a, k| t.sum(a, k)?.log())?)
}
fn reduce_log_sum_exp(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?.cast(DType::F64)?;
    finish(ctx, reduce_with(ctx, 18, &x, |t, a, k| t.logsumexp(a, k))?)
}
fn reduce_sum_square(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let sq = x.mul(x)?;
    finish(ctx, reduce_with(ctx, 18, &sq, |t, a, k| t.sum(a, k))?)
}

/// `ArgMax` / `ArgMin` with `keepdims` and `select_last_index`.
fn arg_reduce(ctx: &OpCtx<'_>, max: bool) -> OpResult {
    let x = ctx.input(0)?;
    let x = if x.dtype().is_bool() {
        x.cast(DType::U8)?
    } else {
        x.clone()
    };
    let axis = ctx.axis(ctx.int("axis", 0)?, x.ndim())?;
    let keep = ctx.int("keepdims", 1)? != 0;
    let last = ctx.int("select_last_index", 0)? != 0;
    let pick = |t: &Tensor| {
        if max {
            t.argmax(Some(axis as isize))
        } else {
            t.argmin(Some(axis as isize))
        }
    };
    let mut idx = if last {
        let n = x.shape()[axis] as i64;
        let flipped = pick(&x.flip(&[axis as isize])?)?.cast(DType::I64)?;
        flipped.neg()?.add(n - 1)?
    } else {
        pick(&x)?.cast(DType::I64)?
    };
    if keep {
        idx = idx.unsqueeze(axis as isize)?;
    }
    Ok(vec![idx])
}
fn arg_max(ctx: &OpCtx<'_>) -> OpResult {
    arg_reduce(ctx, true)
}
fn arg_min(ctx: &OpCtx<'_>) -> OpResult {
    arg_reduce(ctx, false)
}

/// Runs `f` over `axis` in the node's version: before opset 13 the input
/// is viewed as 2-D (`[prod(dims[..axis]), prod(dims[axis..])]`) and the
/// op runs over its second axis; from 13 on over `axis` itself.
fn along_axis(ctx: &OpCtx<'_>, f: impl Fn(&Tensor, isize) -> morok::Result<Tensor>) -> OpResult {
    let x = ctx.input(0)?;
    let rank = x.ndim();
    if ctx.opset < 13 {
        let axis = ctx.axis(ctx.int("axis", 1)?, rank.max(1))?;
        let outer: usize = x.shape()[..axis.min(rank)].iter().product();
        let flat = x.reshape(&[outer as isize, -1])?;
        let out = f(&flat, 1)?;
        let shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
        return Ok(vec![out.reshape(&shape)?]);
    }
    let axis = ctx.axis(ctx.int("axis", -1)?, rank)?;
    Ok(vec![f(x, axis as isize)?])
}
fn softmax(ctx: &OpCtx<'_>) -> OpResult {
    along_axis(ctx, |x, a| x.softmax(a))
}
fn log_softmax(ctx: &OpCtx<'_>) -> OpResult {
    along_axis(ctx, |x, a| x.log_softmax(a))
}
fn hardmax(ctx: &OpCtx<'_>) -> OpResult {
    along_axis(ctx, |x, a| {
        let n = x.shape()[a as usize];
        x.argmax(Some(a))?
            .unsqueeze(a)?
            .eq(&Tensor::arange(0i32, n as i32, 1)?.reshape(&shape_along(
                x.ndim(),
                a as usize,
                n,
            ))?)?
            .cast(x.dtype())
    })
}

/// `[1, .., n, .., 1]`: a vector laid along `axis` of a rank-`rank` tensor.
pub(crate) fn shape_along(rank: usize, axis: usize, n: usize) -> Vec<isize> {
    (0..rank)
        .map(|i| if i == axis { n as isize } else { 1 })
        .collect()
}

fn cum_sum(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let axis = ctx.axis(host_scalar(ctx.input(1)?)? as i64, x.ndim())? as isize;
    let exclusive = ctx.int("exclusive", 0)? != 0;
    let reverse = ctx.int("reverse", 0)? != 0;
    let mut t = x.clone();
    if reverse {
        t = t.flip(&[axis])?;
    }
    let mut out = t.cumsum(axis)?;
    if exclusive {
        out = out.sub(&t)?;
    }
    if reverse {
        out = out.flip(&[axis])?;
    }
    Ok(vec![out.cast(x.dtype())?])
}

fn top_k(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let k = if ctx.opset < 10 {
        ctx.int("k", 0)?
    } else {
        host_scalar(ctx.input(1)?)? as i64
    };
    let axis = ctx.axis(ctx.int("axis", -1)?, x.ndim())?;
    if k < 0 || k as usize > x.shape()[axis] {
        invalid!("k = {k} for an axis of {}", x.shape()[axis]);
    }
    let largest = ctx.int("largest", 1)? != 0;
    let (values, indices) = x.topk(k as usize, axis as isize, largest)?;
    Ok(vec![values, indices.cast(DType::I64)?])
}
