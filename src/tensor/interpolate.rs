//! `interpolate` (`torch.nn.functional.interpolate` with `size`): each
//! spatial axis is resampled separately. The source positions and weights
//! depend on the sizes only, so they are computed on the host and enter
//! the graph as small `i64` / float buffers; the gather is
//! [`Tensor::index_select`].

use super::Tensor;
use crate::error::{Error, Result};
use morok_core::shape::ShapeError;

/// The `mode` of [`Tensor::interpolate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpolateMode {
    /// `"nearest"`: source `floor(o · in / out)`.
    Nearest,
    /// `"nearest-exact"`: source `floor((o + 0.5) · in / out)`.
    NearestExact,
    /// `"linear"` (3-D input).
    Linear,
    /// `"bilinear"` (4-D input).
    Bilinear,
    /// `"trilinear"` (5-D input).
    Trilinear,
}

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
        let op = "interpolate";
        let shape = self.graph()?.shape.clone();
        let spatial = shape.len().saturating_sub(2);
        let linear_rank = match mode {
            InterpolateMode::Linear => Some(1),
            InterpolateMode::Bilinear => Some(2),
            InterpolateMode::Trilinear => Some(3),
            _ => None,
        };
        let fits = shape.len() >= 3
            && size.len() == spatial
            && linear_rank.is_none_or(|r| r == spatial)
            && (linear_rank.is_some() || !align_corners);
        if !fits {
            return Err(Error::shape(ShapeError::new(
                op,
                &[&shape],
                format!(
                    "size {size:?} with {mode:?} (align_corners {align_corners}) needs \
                     [N, C, *spatial] with one size per spatial axis"
                ),
            )));
        }
        let mut out = shape.to_vec();
        out[2..].copy_from_slice(size);
        super::checked_numel(op, &out)?;
        let mut x = self.clone();
        for (k, &o) in size.iter().enumerate() {
            let axis = 2 + k;
            let i = shape[axis];
            if i == o {
                continue;
            }
            if i == 0 {
                return Err(Error::shape(ShapeError::new(
                    op,
                    &[&shape],
                    format!("cannot resample the empty axis {axis} to {o}"),
                )));
            }
            x = x.resample_axis(axis, i, o, mode, align_corners)?;
        }
        Ok(x)
    }

    /// One axis of [`Tensor::interpolate`] from length `i` to `o`.
    #[track_caller]
    fn resample_axis(
        &self,
        axis: usize,
        i: usize,
        o: usize,
        mode: InterpolateMode,
        align_corners: bool,
    ) -> Result<Tensor> {
        let scale = i as f64 / o as f64;
        let last = (i - 1) as i64;
        let pick = |src: f64| (src.floor() as i64).clamp(0, last);
        let index = |v: Vec<i64>| Tensor::from_vec(v, &[o]);
        match mode {
            InterpolateMode::Nearest | InterpolateMode::NearestExact => {
                let offset = if mode == InterpolateMode::Nearest {
                    0.0
                } else {
                    0.5
                };
                let src = (0..o).map(|p| pick((p as f64 + offset) * scale)).collect();
                self.index_select(axis as isize, &index(src)?)
            }
            _ => {
                let srcs: Vec<f64> = (0..o)
                    .map(|p| {
                        if align_corners {
                            if o > 1 {
                                p as f64 * (i - 1) as f64 / (o - 1) as f64
                            } else {
                                0.0
                            }
                        } else {
                            ((p as f64 + 0.5) * scale - 0.5).max(0.0)
                        }
                    })
                    .collect();
                let lo: Vec<i64> = srcs.iter().map(|&s| pick(s)).collect();
                let hi: Vec<i64> = lo.iter().map(|&l| (l + 1).min(last)).collect();
                let frac: Vec<f64> = srcs.iter().zip(&lo).map(|(&s, &l)| s - l as f64).collect();
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
