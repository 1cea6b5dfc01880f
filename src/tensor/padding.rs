//! `torch.nn.functional.pad` with its modes, and `normalize`.

use super::Tensor;
use crate::error::{Located, Result};
use morok_core::shape::{pad_mode_shape, PadMode};

impl Tensor {
    /// `torch.nn.functional.pad(input, pad, mode)` with the one padding
    /// convention: a signed `(before, after)` pair per axis, in axis order
    /// (PyTorch's flattened `pad=(left, right, top, bottom)` is
    /// `&[.., (top, bottom), (left, right)]` here). Negative amounts crop
    /// first; the positive ones are then filled by `mode` from the
    /// cropped tensor.
    #[track_caller]
    pub fn pad_mode(&self, pads: &[(isize, isize)], mode: PadMode) -> Result<Tensor> {
        let op = "pad";
        pad_mode_shape(&self.graph()?.shape, pads, mode).located()?;
        let (mut x, grow) = self.crop_for_pad(op, pads)?;
        for (axis, &(before, after)) in grow.iter().enumerate() {
            x = x.pad_axis(op, axis, before, after, mode)?;
        }
        Ok(x)
    }

    /// One axis of [`Tensor::pad_mode`] (its amounts checked by
    /// `pad_mode_shape`).
    #[track_caller]
    fn pad_axis(
        &self,
        op: &str,
        axis: usize,
        before: usize,
        after: usize,
        mode: PadMode,
    ) -> Result<Tensor> {
        if before == 0 && after == 0 {
            return Ok(self.clone());
        }
        let n = self.shape()[axis];
        // Closures here build views only (no errors to locate).
        let part = |a: usize, b: usize| -> Result<Tensor> {
            let mut bounds: Vec<(usize, usize)> = self.shape().iter().map(|&d| (0, d)).collect();
            bounds[axis] = (a, b);
            self.shrink_to(&bounds)
        };
        let (front, back) = match mode {
            PadMode::Constant(v) => {
                let mut pads = vec![(0, 0); self.ndim()];
                pads[axis] = (before, after);
                let dtype = self.graph()?.dtype;
                return self.pad_with(op, &pads, morok_core::ConstValue::from_f64(v, dtype));
            }
            PadMode::Reflect => (
                part(1, before + 1)?.flip_axes(&[axis])?,
                part(n - 1 - after, n - 1)?.flip_axes(&[axis])?,
            ),
            PadMode::Replicate => {
                let mut grown = self.shape().to_vec();
                grown[axis] = before.max(after);
                super::checked_numel(op, &grown)?;
                let grow = |edge: Tensor, k: usize| -> Result<Tensor> {
                    let mut s = edge.shape().to_vec();
                    s[axis] = k;
                    edge.expand_to(&s)
                };
                (grow(part(0, 1)?, before)?, grow(part(n - 1, n)?, after)?)
            }
            PadMode::Circular => (part(n - before, n)?, part(0, after)?),
        };
        Tensor::cat_as(op, &[&front, self, &back], axis as isize)
    }

    /// PyTorch's `F.normalize(input, p, dim, eps)`: `x / max(‖x‖_p, eps)`
    /// along `dim`.
    #[track_caller]
    pub fn normalize(&self, p: f64, dim: isize, eps: f64) -> Result<Tensor> {
        let d = self.axis("normalize", dim)? as isize;
        let x = self.to_float()?;
        let axis = [d];
        let abs = x.abs()?;
        // PyTorch's vector norms: `p = 0` counts the non-zeros, `±inf` is
        // the largest / smallest magnitude, otherwise `(Σ|x|^p)^(1/p)`.
        let norm = if p == 0.0 {
            abs.ne(0.0)?.cast(x.dtype())?.sum(Some(&axis), true)?
        } else if p == f64::INFINITY {
            abs.max(Some(&axis), true)?
        } else if p == f64::NEG_INFINITY {
            abs.min(Some(&axis), true)?
        } else {
            abs.pow(p)?.sum(Some(&axis), true)?.pow(1.0 / p)?
        };
        x.div(&norm.maximum(eps)?)
    }
}
