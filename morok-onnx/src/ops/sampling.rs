//! Sampling ops: `GridSample`, `AffineGrid`, `MaxUnpool`.
//!
//! `GridSample` reads data-dependent positions, so it is built from
//! gathers: for each tap of the interpolation (1 for nearest, 2 per axis
//! for linear, 4 per axis for cubic) the per-axis source indices are
//! combined into a flat index into each `[N, C]` plane, gathered, and
//! weighted; the padding mode decides what an index outside the input
//! reads (zero, the clamped border, or its reflection), as in the
//! reference evaluator.

use super::{host_ints, invalid, to_shape, OpCtx, OpFn, OpResult};
use morok::{DType, Slice, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("GridSample", grid_sample),
    ("AffineGrid", affine_grid),
    ("MaxUnpool", max_unpool),
];

/// Component `k` of the last axis of `grid`, without that axis.
fn component(grid: &Tensor, k: usize) -> OpResult<Tensor> {
    let mut sl = vec![Slice::all(); grid.ndim()];
    sl[grid.ndim() - 1] = Slice {
        start: Some(k as isize),
        end: Some(k as isize + 1),
        step: 1,
    };
    Ok(grid.slice(&sl)?.squeeze(-1)?)
}

/// Reflects `x` into `[lo, hi]` by its nearer border, repeatedly.
fn reflect(x: &Tensor, lo: f64, hi: f64) -> OpResult<Tensor> {
    let range = hi - lo;
    if range <= 0.0 {
        return Ok(x.zeros_like()?.add(lo)?);
    }
    let below = x.lt(lo)?;
    let above = x.gt(hi)?;
    let dx = below.where_(x.neg()?.add(lo)?, &x.sub(hi)?)?;
    let n = dx.div(range)?.floor()?;
    let r = dx.sub(&n.mul(range)?)?;
    let even = n.fmod(2.0)?.eq(0.0)?;
    let from_below = even.where_(r.add(lo)?, &r.neg()?.add(hi)?)?;
    let from_above = even.where_(r.neg()?.add(hi)?, &r.add(lo)?)?;
    Ok(below.where_(&from_below, &above.where_(&from_above, x)?)?)
}

/// The Keys cubic kernel (a = -0.75) at distance `d` (a tensor, `d >= 0`).
fn keys(d: &Tensor) -> OpResult<Tensor> {
    let a = -0.75;
    let near = d.mul(a + 2.0)?.sub(a + 3.0)?.mul(d)?.mul(d)?.add(1.0)?;
    let far = d
        .mul(a)?
        .sub(5.0 * a)?
        .mul(d)?
        .add(8.0 * a)?
        .mul(d)?
        .sub(4.0 * a)?;
    Ok(d.le(1.0)?.where_(&near, &far)?)
}

fn grid_sample(ctx: &OpCtx<'_>) -> OpResult {
    let (x, grid) = (ctx.input(0)?, ctx.input(1)?);
    let r = x.ndim().saturating_sub(2);
    if r == 0
        || grid.ndim() != r + 2
        || grid.shape()[grid.ndim() - 1] != r
        || grid.shape()[0] != x.shape()[0]
    {
        invalid!("input {:?} and grid {:?}", x.shape(), grid.shape());
    }
    let mode = match ctx
        .string("mode", if ctx.opset < 20 { "bilinear" } else { "linear" })?
        .as_str()
    {
        "bilinear" | "linear" => "linear",
        "bicubic" | "cubic" => "cubic",
        "nearest" => "nearest",
        other => invalid!("mode {other:?}"),
    };
    let padding = ctx.string("padding_mode", "zeros")?;
    let align = ctx.int("align_corners", 0)? != 0;
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let dims = &x.shape()[2..];
    let out = &grid.shape()[1..grid.ndim() - 1];
    let q: usize = out.iter().product();
    let g = grid.cast(DType::F32)?;

    // Per spatial axis: its taps (index, weight) over [N, *out].
    let mut axis_taps: Vec<Vec<(Tensor, Tensor)>> = Vec::with_capacity(r);
    for (d, &len) in dims.iter().enumerate() {
        let len_f = len as f64;
        let norm = component(&g, r - 1 - d)?;
        let mut pos = if align {
            norm.add(1.0)?.mul((len_f - 1.0) / 2.0)?
        } else {
            norm.add(1.0)?.mul(len_f)?.sub(1.0)?.div(2.0)?
        };
        if mode == "nearest" {
            pos = pos.round()?;
        }
        let (lo, hi) = if align {
            (0.0, len_f - 1.0)
        } else {
            (-0.5, len_f - 0.5)
        };
        pos = match padding.as_str() {
            "border" => pos.clamp(0.0, len_f - 1.0)?,
            "reflection" => reflect(&pos, lo, hi)?,
            "zeros" => pos,
            other => invalid!("padding_mode {other:?}"),
        };
        let taps = match mode {
            "nearest" => vec![(pos.trunc()?, pos.ones_like()?)],
            "linear" => {
                let base = pos.floor()?;
                let t = pos.sub(&base)?;
                vec![(base.clone(), t.neg()?.add(1.0)?), (base.add(1.0)?, t)]
            }
            _ => {
                let base = pos.floor()?;
                let t = pos.sub(&base)?;
                vec![
                    (base.sub(1.0)?, keys(&t.add(1.0)?)?),
                    (base.clone(), keys(&t)?),
                    (base.add(1.0)?, keys(&t.neg()?.add(1.0)?)?),
                    (base.add(2.0)?, keys(&t.neg()?.add(2.0)?)?),
                ]
            }
        };
        // What an index outside the input reads.
        let mut fixed = Vec::with_capacity(taps.len());
        for (i, w) in taps {
            let (i, w) = match padding.as_str() {
                "zeros" => {
                    let inside = i.ge(0.0)?.logical_and(&i.le(len_f - 1.0)?)?;
                    (i.clamp(0.0, len_f - 1.0)?, inside.where_(&w, 0.0)?)
                }
                "border" => (i.clamp(0.0, len_f - 1.0)?, w),
                _ => (reflect(&i, lo, hi)?.trunc()?.clamp(0.0, len_f - 1.0)?, w),
            };
            fixed.push((i, w));
        }
        axis_taps.push(fixed);
    }

    let plane: usize = dims.iter().product();
    let flat_x = x.reshape(&[n as isize, c as isize, plane as isize])?;
    let strides: Vec<usize> = (0..r).map(|d| dims[d + 1..].iter().product()).collect();
    let mut acc: Option<Tensor> = None;
    let mut choice = vec![0usize; r];
    loop {
        let mut index: Option<Tensor> = None;
        let mut weight: Option<Tensor> = None;
        for d in 0..r {
            let (i, w) = &axis_taps[d][choice[d]];
            let term = i.mul(strides[d] as f64)?;
            index = Some(match index {
                Some(acc_i) => acc_i.add(&term)?,
                None => term,
            });
            weight = Some(match weight {
                Some(acc_w) => acc_w.mul(w)?,
                None => w.clone(),
            });
        }
        let Some(index) = index else {
            invalid!("no spatial axes");
        };
        let index = index
            .cast(DType::I64)?
            .reshape(&[n as isize, 1, q as isize])?;
        let index = index.broadcast_to(&[n, c, q])?;
        let picked = flat_x.gather(2, &index)?;
        let w = weight
            .unwrap_or(picked.ones_like()?)
            .reshape(&[n as isize, 1, q as isize])?;
        let term = picked.cast(DType::F32)?.mul(&w)?;
        acc = Some(match acc {
            Some(a) => a.add(&term)?,
            None => term,
        });
        // The next combination of taps (an odometer over the axes).
        let mut d = r;
        loop {
            if d == 0 {
                let mut shape: Vec<isize> = vec![n as isize, c as isize];
                shape.extend(out.iter().map(|&o| o as isize));
                let result = acc.unwrap_or(Tensor::zeros(&[n, c, q], DType::F32));
                return Ok(vec![result.reshape(&shape)?.cast(x.dtype())?]);
            }
            d -= 1;
            choice[d] += 1;
            if choice[d] < axis_taps[d].len() {
                break;
            }
            choice[d] = 0;
        }
    }
}

fn affine_grid(ctx: &OpCtx<'_>) -> OpResult {
    let theta = ctx.input(0)?;
    let size = to_shape(&host_ints(ctx.input(1)?)?)?;
    let align = ctx.int("align_corners", 0)? != 0;
    let spatial = &size[2.min(size.len())..];
    let r = spatial.len();
    if !(r == 2 || r == 3) || theta.shape() != [size[0], r, r + 1] {
        invalid!("theta {:?} for size {size:?}", theta.shape());
    }
    let coords = |len: usize| -> Vec<f64> {
        (0..len)
            .map(|i| {
                if align {
                    if len > 1 {
                        -1.0 + 2.0 * i as f64 / (len as f64 - 1.0)
                    } else {
                        -1.0
                    }
                } else {
                    -1.0 + (2.0 * i as f64 + 1.0) / len as f64
                }
            })
            .collect()
    };
    let axes: Vec<Vec<f64>> = spatial.iter().map(|&l| coords(l)).collect();
    let points: usize = spatial.iter().product();
    // Rows (x, y[, z], 1) with x along the last spatial axis.
    let mut base = Vec::with_capacity(points * (r + 1));
    for p in 0..points {
        let mut rem = p;
        let mut idx = vec![0usize; r];
        for d in (0..r).rev() {
            idx[d] = rem % spatial[d];
            rem /= spatial[d];
        }
        for d in (0..r).rev() {
            base.push(axes[d][idx[d]]);
        }
        base.push(1.0);
    }
    let base = Tensor::from_vec(base, &[points, r + 1])?.cast(theta.dtype())?;
    let grid = base.matmul(&theta.transpose(1, 2)?)?;
    let mut shape = vec![size[0] as isize];
    shape.extend(spatial.iter().map(|&s| s as isize));
    shape.push(r as isize);
    Ok(vec![grid.reshape(&shape)?])
}

fn max_unpool(ctx: &OpCtx<'_>) -> OpResult {
    let (x, index) = (ctx.input(0)?, ctx.input(1)?);
    if x.ndim() < 3 || index.shape() != x.shape() {
        invalid!("input {:?} and indices {:?}", x.shape(), index.shape());
    }
    // Indices address the default output (the pooling inverted); a
    // larger `output_shape` adds zeros at the end of each axis.
    let r = x.ndim() - 2;
    let kernel = ctx.ints("kernel_shape")?.unwrap_or_default();
    let strides = ctx.ints("strides")?.unwrap_or(vec![1; r]);
    let pads = ctx.ints("pads")?.unwrap_or(vec![0; 2 * r]);
    if kernel.len() != r || strides.len() != r || pads.len() != 2 * r {
        invalid!("kernel_shape, strides or pads of the wrong length for {r} spatial axes");
    }
    let mut shape = x.shape()[..2].to_vec();
    for d in 0..r {
        let len = (x.shape()[2 + d] as i64 - 1) * strides[d] + kernel[d] - pads[d] - pads[d + r];
        shape.push(to_shape(&[len])?[0]);
    }
    let target = match ctx.opt(2) {
        Some(s) => to_shape(&host_ints(s)?)?,
        None => shape.clone(),
    };
    if target.len() != shape.len() || target.iter().zip(&shape).any(|(t, s)| t < s) {
        invalid!("output_shape {target:?} smaller than the unpooled {shape:?}");
    }
    let total: usize = shape.iter().product();
    let flat = Tensor::zeros(&[total], x.dtype()).scatter(
        0,
        &index.cast(DType::I64)?.reshape(&[-1])?,
        &x.reshape(&[-1])?,
    )?;
    let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let grow: Vec<(isize, isize)> = target
        .iter()
        .zip(&shape)
        .map(|(&t, &s)| (0, (t - s) as isize))
        .collect();
    Ok(vec![flat
        .reshape(&dims)?
        .pad(&grow, 0.0f64)?
        .cast(x.dtype())?])
}
