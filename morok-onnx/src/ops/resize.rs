//! `Resize` and `Upsample`: separable resampling, one axis at a time.
//!
//! For each resized axis the source coordinate of every output position is
//! computed on the host (per `coordinate_transformation_mode`), turned
//! into taps (1 for nearest, 2 for linear, 4 for cubic) with their
//! weights, and the axis is rebuilt as the weighted sum of the gathered
//! taps. This covers every mode and coordinate rule the spec lists with
//! one mechanism.

use super::indexing::take;
use super::reduce::shape_along;
use super::{host_floats, host_ints, invalid, unsupported, OpCtx, OpResult};
use morok::{DType, Tensor};

/// The resampling rule of a node.
struct Rule {
    mode: String,
    coords: String,
    nearest: String,
    cubic_a: f64,
    exclude_outside: bool,
    extrapolation: f64,
}

/// Taps and weights of one output position: `(source index, weight)`,
/// or `None` when the position lies outside a crop (`extrapolation_value`).
type Taps = Option<Vec<(usize, f64)>>;

fn source_coord(rule: &Rule, o: usize, len: usize, out: usize, scale: f64, roi: (f64, f64)) -> f64 {
    let (o, len_f, out_f) = (o as f64, len as f64, out as f64);
    match rule.coords.as_str() {
        "asymmetric" => o / scale,
        // The reference divides by the unrounded output length.
        "align_corners" if len_f * scale - 1.0 <= 0.0 => 0.0,
        "align_corners" => o * (len_f - 1.0) / (len_f * scale - 1.0),
        "pytorch_half_pixel" if out <= 1 => 0.0,
        "tf_crop_and_resize" if out <= 1 => 0.5 * (roi.0 + roi.1) * (len_f - 1.0),
        "tf_crop_and_resize" => {
            roi.0 * (len_f - 1.0) + o * (roi.1 - roi.0) * (len_f - 1.0) / (out_f - 1.0)
        }
        "half_pixel_symmetric" => {
            let adjustment = out_f / (scale * len_f);
            let center = len_f / 2.0;
            center * (1.0 - adjustment) + (o + 0.5) / scale - 0.5
        }
        _ => (o + 0.5) / scale - 0.5,
    }
}

fn cubic_weight(d: f64, a: f64) -> f64 {
    let d = d.abs();
    if d <= 1.0 {
        ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
    } else if d < 2.0 {
        ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
    } else {
        0.0
    }
}

fn taps(rule: &Rule, x: f64, len: usize) -> Taps {
    let last = len as f64 - 1.0;
    if rule.coords == "tf_crop_and_resize" && (x < 0.0 || x > last) {
        return None;
    }
    let clamp = |i: f64| i.clamp(0.0, last) as usize;
    Some(match rule.mode.as_str() {
        "nearest" => {
            let i = match rule.nearest.as_str() {
                "floor" => x.floor(),
                "ceil" => x.ceil(),
                "round_prefer_ceil" if x.fract() == 0.5 => x.ceil(),
                "round_prefer_ceil" => x.round(),
                _ if (x - x.floor()) == 0.5 => x.floor(),
                _ => x.round(),
            };
            vec![(clamp(i), 1.0)]
        }
        "linear" => {
            let x = x.clamp(0.0, last);
            let lo = x.floor();
            let w = x - lo;
            vec![(clamp(lo), 1.0 - w), (clamp(lo + 1.0), w)]
        }
        _ => {
            let base = x.floor();
            let frac = x - base;
            let mut t: Vec<(f64, f64)> = (-1..=2)
                .map(|k| (base + k as f64, cubic_weight(frac - k as f64, rule.cubic_a)))
                .collect();
            if rule.exclude_outside {
                for tap in &mut t {
                    if tap.0 < 0.0 || tap.0 > last {
                        tap.1 = 0.0;
                    }
                }
                let total: f64 = t.iter().map(|t| t.1).sum();
                if total != 0.0 {
                    t.iter_mut().for_each(|tap| tap.1 /= total);
                }
            }
            t.into_iter().map(|(i, w)| (clamp(i), w)).collect()
        }
    })
}

/// Resamples axis `axis` of `x` to `out` positions.
fn resample_axis(
    x: &Tensor,
    axis: usize,
    out: usize,
    scale: f64,
    roi: (f64, f64),
    rule: &Rule,
) -> OpResult<Tensor> {
    let len = x.shape()[axis];
    if len == 0 {
        invalid!("resizing an empty axis {axis}");
    }
    let plan: Vec<Taps> = (0..out)
        .map(|o| taps(rule, source_coord(rule, o, len, out, scale, roi), len))
        .collect();
    let width = plan.iter().flatten().map(Vec::len).max().unwrap_or(1);
    let shape = shape_along(x.ndim(), axis, out);
    let mut acc: Option<Tensor> = None;
    for k in 0..width {
        let idx: Vec<i64> = plan
            .iter()
            .map(|p| p.as_ref().and_then(|t| t.get(k)).map_or(0, |t| t.0 as i64))
            .collect();
        let w: Vec<f64> = plan
            .iter()
            .map(|p| p.as_ref().and_then(|t| t.get(k)).map_or(0.0, |t| t.1))
            .collect();
        let picked = take(x, axis, &Tensor::from_vec(idx, &[out])?)?;
        let weights = Tensor::from_vec(w, &[out])?
            .cast(x.dtype())?
            .reshape(&shape)?;
        let term = picked.mul(&weights)?;
        acc = Some(match acc {
            Some(a) => a.add(&term)?,
            None => term,
        });
    }
    let mut result = acc.unwrap_or(x.clone());
    if plan.iter().any(Option::is_none) {
        let outside: Vec<bool> = plan.iter().map(Option::is_none).collect();
        let mask = Tensor::from_vec(outside, &[out])?.reshape(&shape)?;
        result = mask.where_(rule.extrapolation, &result)?;
    }
    Ok(result)
}

/// Resizes `x` on the axes in `targets` (axis, output size, scale).
fn resize_axes(
    x: &Tensor,
    targets: &[(usize, usize, f64)],
    rois: &[(f64, f64)],
    rule: &Rule,
) -> OpResult<Tensor> {
    let float = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    let mut t = x.cast(float)?;
    for (k, &(axis, out, scale)) in targets.iter().enumerate() {
        let same = out == t.shape()[axis] && scale == 1.0 && rule.coords != "tf_crop_and_resize";
        if !same {
            t = resample_axis(&t, axis, out, scale, rois[k], rule)?;
        }
    }
    if !x.dtype().is_float() {
        t = t.round()?;
    }
    Ok(t.cast(x.dtype())?)
}

pub(super) fn resize(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let rank = x.ndim();
    if ctx.int("antialias", 0)? != 0 {
        unsupported!("antialiased resize");
    }
    let rule = Rule {
        mode: ctx.string("mode", "nearest")?,
        coords: if ctx.opset < 11 {
            "asymmetric".into()
        } else {
            ctx.string("coordinate_transformation_mode", "half_pixel")?
        },
        nearest: if ctx.opset < 11 {
            "round_prefer_ceil".into()
        } else {
            ctx.string("nearest_mode", "round_prefer_floor")?
        },
        cubic_a: ctx.float("cubic_coeff_a", -0.75)? as f64,
        exclude_outside: ctx.int("exclude_outside", 0)? != 0,
        extrapolation: ctx.float("extrapolation_value", 0.0)? as f64,
    };
    if !matches!(rule.mode.as_str(), "nearest" | "linear" | "cubic") {
        invalid!("mode {:?}", rule.mode);
    }
    let axes: Vec<usize> = match ctx.ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&a| ctx.axis(a, rank))
            .collect::<OpResult<_>>()?,
        None => (0..rank).collect(),
    };
    let n = axes.len();
    let (scales_in, sizes_in, roi_in) = if ctx.opset < 11 {
        (ctx.opt(1), None, None)
    } else {
        (ctx.opt(2), ctx.opt(3), ctx.opt(1))
    };
    let scales = match scales_in {
        Some(t) if t.numel() > 0 => Some(host_floats(t)?),
        _ => None,
    };
    let sizes = match sizes_in {
        Some(t) if t.numel() > 0 => Some(host_ints(t)?),
        _ => None,
    };
    let roi = match roi_in {
        Some(t) if t.numel() > 0 => Some(host_floats(t)?),
        _ => None,
    };
    let lens: Vec<usize> = axes.iter().map(|&a| x.shape()[a]).collect();
    let targets: Vec<(usize, usize, f64)> = match (scales, sizes) {
        (Some(s), None) if s.len() == n => (0..n)
            .map(|i| (axes[i], (lens[i] as f64 * s[i]).floor() as usize, s[i]))
            .collect(),
        (None, Some(sz)) if sz.len() == n => {
            let sz = super::to_shape(&sz)?;
            let ratios: Vec<f64> = (0..n).map(|i| sz[i] as f64 / lens[i] as f64).collect();
            let policy = ctx.string("keep_aspect_ratio_policy", "stretch")?;
            let common = match policy.as_str() {
                "not_larger" => Some(ratios.iter().copied().fold(f64::INFINITY, f64::min)),
                "not_smaller" => Some(ratios.iter().copied().fold(0.0, f64::max)),
                _ => None,
            };
            (0..n)
                .map(|i| match common {
                    Some(r) => (axes[i], (lens[i] as f64 * r).round() as usize, r),
                    None => (axes[i], sz[i], ratios[i]),
                })
                .collect()
        }
        _ => invalid!("exactly one of scales and sizes must be given, with one entry per axis"),
    };
    let created: usize = targets.iter().map(|t| t.1).product();
    if created > super::MAX_CREATED {
        invalid!("output of {created} elements");
    }
    let rois: Vec<(f64, f64)> = match roi {
        Some(r) if r.len() == 2 * n => (0..n).map(|i| (r[i], r[i + n])).collect(),
        Some(r) if r.len() == 2 * rank => axes.iter().map(|&a| (r[a], r[a + rank])).collect(),
        _ => vec![(0.0, 1.0); n],
    };
    Ok(vec![resize_axes(x, &targets, &rois, &rule)?])
}

pub(super) fn upsample(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let scales = match ctx.floats("scales")? {
        Some(s) => s.iter().map(|&v| v as f64).collect(),
        None => host_floats(ctx.input(1)?)?,
    };
    if scales.len() != x.ndim() {
        invalid!("{} scales for rank {}", scales.len(), x.ndim());
    }
    let mode = ctx.string("mode", "nearest")?;
    let rule = Rule {
        mode: if mode == "bilinear" {
            "linear".into()
        } else {
            mode
        },
        coords: "asymmetric".into(),
        nearest: "floor".into(),
        cubic_a: -0.75,
        exclude_outside: false,
        extrapolation: 0.0,
    };
    let targets: Vec<(usize, usize, f64)> = scales
        .iter()
        .enumerate()
        .map(|(a, &s)| (a, (x.shape()[a] as f64 * s).floor() as usize, s))
        .collect();
    let rois = vec![(0.0, 1.0); targets.len()];
    Ok(vec![resize_axes(x, &targets, &rois, &rule)?])
}
