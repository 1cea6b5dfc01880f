//! `interpolate` (`torch.nn.functional.interpolate` with `size` or
//! `scale_factor`): each spatial axis is resampled separately.
//!
//! With `size`, output position `o` of an axis of `i` inputs maps to the
//! source `o · i / out` (nearest), `(o + 0.5) · i / out - 0.5` (linear, no
//! `align_corners`). With `scale_factor` `f` (and `recompute_scale_factor`
//! unset, PyTorch's default) the output is `floor(i · f)` long and the
//! maps use `1 / f` in place of `i / out`, as PyTorch does; as there, the
//! positions are computed in `f32`, and plain nearest copies an axis whose
//! length is unchanged and halves positions where it doubles. The source positions and weights
//! depend on the sizes only, so they are computed on the host and enter
//! the graph as small `i64` / float buffers; the gather is
//! [`Tensor::index_select`].

use super::Tensor;
use crate::error::Located;
use crate::error::Result;
use morok_core::shape::{interpolate_scale_shape, interpolate_shape, InterpolateMode};

impl Tensor {
    /// Resamples the spatial axes of `[N, C, *spatial]` to `size`.
    /// `align_corners` (linear modes only) maps the corner samples onto
    /// each other; otherwise samples are taken at pixel centres, as in
    /// PyTorch.
    #[track_caller]
    pub fn interpolate(
        &self,
        size: &[usize],
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Tensor> {
        let plan: Vec<(usize, Option<f64>)> = size.iter().map(|&o| (o, None)).collect();
        self.resample("interpolate", &plan, mode, align_corners)
    }

    /// `interpolate` with `scale_factor` (one per spatial axis): each
    /// output axis is `floor(in · scale)` long, and the source positions
    /// use `1 / scale` (see the module docs).
    #[track_caller]
    pub fn interpolate_scale(
        &self,
        scale_factor: &[f64],
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Tensor> {
        let op = "interpolate";
        let shape = self.graph()?.shape.clone();
        let out =
            interpolate_scale_shape(op, &shape, scale_factor, mode, align_corners).located()?;
        let plan: Vec<(usize, Option<f64>)> = out[2..]
            .iter()
            .zip(scale_factor)
            .map(|(&o, &f)| (o, Some(f)))
            .collect();
        self.resample(op, &plan, mode, align_corners)
    }

    /// Resamples spatial axis `k` to `plan[k].0` outputs, with the source
    /// ratio `1 / plan[k].1` when a scale factor is given.
    #[track_caller]
    fn resample(
        &self,
        op: &str,
        plan: &[(usize, Option<f64>)],
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        let size: Vec<usize> = plan.iter().map(|p| p.0).collect();
        let linear_rank = mode.linear_rank();
        interpolate_shape(op, &shape, &size, mode, align_corners).located()?;
        let mut out = shape.to_vec();
        out[2..].copy_from_slice(&size);
        super::checked_numel(op, &out)?;
        let mut x = self.clone();
        for (k, &(o, factor)) in plan.iter().enumerate() {
            let axis = 2 + k;
            let i = shape[axis];
            if i == o && factor.is_none_or(|f| f == 1.0) {
                continue;
            }
            let ratio = match factor {
                Some(f) => (1.0 / f) as f32,
                None => i as f32 / o as f32,
            };
            x = x.resample_axis(axis, i, o, ratio, mode, align_corners)?;
        }
        // Linear modes compute in floats; an integer input keeps its
        // dtype, rounded half up (`floor(v + 0.5)`) as PyTorch's `u8`
        // kernels do (the values are convex combinations, so they stay in
        // range).
        let input = self.graph()?.dtype;
        if linear_rank.is_some() && input.is_int() && x.graph()?.dtype != input {
            x = x.add(0.5)?.floor()?.cast_to(input)?;
        }
        Ok(x)
    }

    /// One axis of [`Tensor::interpolate`] from length `i` to `o`, output
    /// position `p` reading around source `p · ratio` (with PyTorch's
    /// offsets, in `f32`).
    #[track_caller]
    fn resample_axis(
        &self,
        axis: usize,
        i: usize,
        o: usize,
        ratio: f32,
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Tensor> {
        let last = (i - 1) as i64;
        let pick = |src: f32| (src.floor() as i64).clamp(0, last);
        let index = |v: Vec<i64>| Tensor::from_vec(v, &[o]);
        match mode {
            InterpolateMode::Nearest | InterpolateMode::NearestExact => {
                let exact = mode == InterpolateMode::NearestExact;
                let src = (0..o)
                    .map(|p| match (exact, o) {
                        (false, o) if o == i => p as i64,
                        (false, o) if o == 2 * i => (p / 2) as i64,
                        (false, _) => pick(p as f32 * ratio),
                        (true, _) => pick((p as f32 + 0.5) * ratio),
                    })
                    .collect();
                self.index_select(axis as isize, &index(src)?)
            }
            _ => {
                let srcs: Vec<f32> = (0..o)
                    .map(|p| {
                        if align_corners {
                            if o > 1 {
                                p as f32 * ((i - 1) as f32 / (o - 1) as f32)
                            } else {
                                0.0
                            }
                        } else {
                            ((p as f32 + 0.5) * ratio - 0.5).max(0.0)
                        }
                    })
                    .collect();
                let lo: Vec<i64> = srcs.iter().map(|&s| pick(s)).collect();
                let hi: Vec<i64> = lo.iter().map(|&l| (l + 1).min(last)).collect();
                let frac: Vec<f64> = srcs
                    .iter()
                    .zip(&lo)
                    .map(|(&s, &l)| (s - l as f32) as f64)
                    .collect();
                let x = self.to_float()?;
                let mut at = vec![1; x.ndim()];
                at[axis] = o;
                let w = Tensor::from_vec(frac, &at)?;
                let a = x.index_select(axis as isize, &index(lo)?)?;
                let b = x.index_select(axis as isize, &index(hi)?)?;
                // a + (b - a)·w, in the input's float dtype.
                let dtype = x.graph()?.dtype;
                a.add(&b.sub(&a)?.mul(&w.cast_to(dtype)?)?)
            }
        }
    }
}
