//! Movement ops: views that change shape or element order without
//! computing. Each public op checks its arguments and lowers to the six
//! movement primitives (RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP).

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::dtype::Element;
use morok_core::shape::{
    broadcast_to_shape, expand_dims, flatten_shape, flip_axes, normalize_axis, pad_shape,
    permute_shape, repeat_shape, reshape_target, shrink_shape, slice_shape, squeeze_all_shape,
    squeeze_shape, transpose_shape, unflatten_shape, unsqueeze_shape, ReshapeDim, Slice,
};
use morok_core::uop::{Arg, Op, Shape, UOp};
use morok_core::ScalarType;
use smallvec::smallvec;

/// Normalizes `axis` for `op` against `shape`, as PyTorch does: negative
/// axes count from the end, and a 0-d tensor accepts axes `0` and `-1`
/// (both name the tensor itself).
#[track_caller]
pub(super) fn dim_index(op: &str, shape: &[usize], axis: isize) -> Result<usize> {
    normalize_axis(op, shape, axis).located()
}

// ---- primitives: build one movement node, skipping no-ops ----
impl Tensor {
    #[track_caller]
    fn movement_node(&self, op: Op, arg: Arg, shape: Shape) -> Result<Tensor> {
        let g = self.graph()?;
        let uop = UOp::new(op, g.uop.dtype(), smallvec![g.uop.clone()], arg);
        self.derive(uop, shape)
    }

    /// RESHAPE to `shape` (same element count). A reshape of a reshape
    /// reshapes the inner source, and a buffer reshaped back to its own
    /// 1-D shape is the bare BUFFER.
    #[track_caller]
    pub(super) fn reshape_to(&self, shape: &[usize]) -> Result<Tensor> {
        let g = self.graph()?;
        if g.shape.as_slice() == shape {
            return Ok(self.clone());
        }
        let source = match (g.uop.op(), g.uop.src().first()) {
            (Op::Reshape, Some(inner)) => inner.clone(),
            _ => g.uop.clone(),
        };
        if let Arg::Buffer { size, .. } = source.arg() {
            if source.op() == Op::Buffer && shape == [*size] {
                return self.derive(source, shape.into());
            }
        }
        let uop = UOp::new(
            Op::Reshape,
            source.dtype(),
            smallvec![source],
            Arg::Shape(shape.into()),
        );
        self.derive(uop, shape.into())
    }

    /// Broadcasts to `shape` (NumPy rules, already checked): RESHAPE to add
    /// leading axes, then EXPAND.
    #[track_caller]
    pub(super) fn expand_to(&self, shape: &[usize]) -> Result<Tensor> {
        let src = self.graph()?.shape.clone();
        let mut aligned: Shape = smallvec![1; shape.len().saturating_sub(src.len())];
        aligned.extend_from_slice(&src);
        let x = self.reshape_to(&aligned)?;
        if aligned.as_slice() == shape {
            return Ok(x);
        }
        x.movement_node(Op::Expand, Arg::Shape(shape.into()), shape.into())
    }

    /// PERMUTE by a checked permutation.
    #[track_caller]
    pub(super) fn permute_to(&self, perm: &[usize]) -> Result<Tensor> {
        let src = &self.graph()?.shape;
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            return Ok(self.clone());
        }
        let shape = perm.iter().map(|&p| src[p]).collect();
        self.movement_node(Op::Permute, Arg::Axes(perm.into()), shape)
    }

    /// PAD with zeros by `(before, after)` per axis; a result too large is
    /// an error of `op`.
    #[track_caller]
    pub(super) fn pad_to(&self, op: &str, pads: &[(usize, usize)]) -> Result<Tensor> {
        let src = &self.graph()?.shape;
        if pads.iter().all(|&p| p == (0, 0)) {
            return Ok(self.clone());
        }
        let grown: Option<Shape> = src
            .iter()
            .zip(pads)
            .map(|(&d, &(a, b))| d.checked_add(a)?.checked_add(b))
            .collect();
        let Some(shape) = grown else {
            return Err(Error::argument(
                op,
                format!("padding {pads:?} is too large"),
            ));
        };
        super::checked_numel(op, &shape)?;
        let arg = Arg::Pairs(pads.iter().map(|&(a, b)| (a as i64, b as i64)).collect());
        self.movement_node(Op::Pad, arg, shape)
    }

    /// SHRINK to `[begin, end)` per axis (checked bounds).
    #[track_caller]
    pub(super) fn shrink_to(&self, bounds: &[(usize, usize)]) -> Result<Tensor> {
        let src = &self.graph()?.shape;
        if bounds.iter().zip(src).all(|(&(b, e), &d)| b == 0 && e == d) {
            return Ok(self.clone());
        }
        let shape = bounds.iter().map(|&(b, e)| e - b).collect();
        let arg = Arg::Pairs(bounds.iter().map(|&(b, e)| (b as i64, e as i64)).collect());
        self.movement_node(Op::Shrink, arg, shape)
    }

    /// FLIP the (checked) axes.
    #[track_caller]
    pub(super) fn flip_axes(&self, axes: &[usize]) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        if axes.is_empty() {
            return Ok(self.clone());
        }
        self.movement_node(Op::Flip, Arg::Axes(axes.into()), shape)
    }

    /// Swaps two (normalized) axes; swapping an axis with itself (the
    /// only axis 0 of a scalar included) changes nothing.
    #[track_caller]
    pub(super) fn swap_axes(&self, a: usize, b: usize) -> Result<Tensor> {
        self.graph()?;
        if a == b {
            return Ok(self.clone());
        }
        let mut perm: Vec<usize> = (0..self.ndim()).collect();
        perm.swap(a, b);
        self.permute_to(&perm)
    }

    /// Normalizes `axis` for `op` against this tensor's rank.
    #[track_caller]
    pub(super) fn axis(&self, op: &str, axis: isize) -> Result<usize> {
        dim_index(op, &self.graph()?.shape, axis)
    }
}

// ---- the public movement ops ----
impl Tensor {
    /// A view with a new shape of the same element count, in row-major
    /// order; one dimension may be `-1` (inferred).
    #[track_caller]
    pub fn reshape(&self, shape: &[isize]) -> Result<Tensor> {
        let target = reshape_target(&self.graph()?.shape, shape).located()?;
        super::checked_numel("reshape", &target)?;
        self.reshape_to(&target)
    }

    /// Reorders the axes: axis `i` of the result is axis `perm[i]` of
    /// `self` (negative axes count from the end).
    #[track_caller]
    pub fn permute(&self, perm: &[isize]) -> Result<Tensor> {
        let (axes, _) = permute_shape(&self.graph()?.shape, perm).located()?;
        self.permute_to(&axes)
    }

    /// Swaps axes `a` and `b`.
    #[track_caller]
    pub fn transpose(&self, a: isize, b: isize) -> Result<Tensor> {
        let ((a, b), _) = transpose_shape(&self.graph()?.shape, a, b).located()?;
        self.swap_axes(a, b)
    }

    /// Broadcasts to `shape` with NumPy rules: axes align from the right,
    /// and only size-1 axes (or new leading axes) can grow.
    #[track_caller]
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        self.broadcast_as("broadcast_to", shape)
    }

    /// [`Tensor::broadcast_to`] with errors naming `op`.
    #[track_caller]
    fn broadcast_as(&self, op: &str, shape: &[usize]) -> Result<Tensor> {
        let src = self.graph()?.shape.clone();
        super::checked_numel(op, shape)?;
        broadcast_to_shape(op, &src, shape).located()?;
        self.expand_to(shape)
    }

    /// PyTorch `expand`: like [`Tensor::broadcast_to`], where `-1`
    /// keeps the size of the aligned axis.
    #[track_caller]
    pub fn expand(&self, shape: &[isize]) -> Result<Tensor> {
        let src = self.graph()?.shape.clone();
        let wanted: Vec<ReshapeDim<usize>> =
            shape.iter().map(|&d| ReshapeDim::from_signed(d)).collect();
        let target = expand_dims(&src, &wanted).located()?;
        self.broadcast_as("expand", &target)
    }

    /// Pads every axis by `(before, after)` elements of `value`; negative
    /// amounts remove elements instead (the padding convention:
    /// `docs/CONVENTIONS.md`).
    #[track_caller]
    pub fn pad<T: Element>(&self, pads: &[(isize, isize)], value: T) -> Result<Tensor> {
        let (x, grow) = self.crop_for_pad("pad", pads)?;
        x.pad_with("pad", &grow, super::operand::const_value(value))
    }

    /// [`Tensor::pad`] with zeros; errors name `op`.
    #[track_caller]
    pub(super) fn pad_signed(&self, op: &str, pads: &[(isize, isize)]) -> Result<Tensor> {
        let (x, grow) = self.crop_for_pad(op, pads)?;
        x.pad_to(op, &grow)
    }

    /// The first half of a signed pad: `self` with the negative amounts
    /// of `pads` (one pair per axis) cropped, and the positive amounts
    /// still to add. Errors (a pair count other than the rank, a crop of
    /// more than an axis, a result too large) name `op`.
    #[track_caller]
    pub(super) fn crop_for_pad(
        &self,
        op: &str,
        pads: &[(isize, isize)],
    ) -> Result<(Tensor, Vec<(usize, usize)>)> {
        let shape = self.graph()?.shape.clone();
        let padded = pad_shape(op, &shape, pads).located()?;
        let mut crop = Vec::with_capacity(shape.len());
        let mut grow = Vec::with_capacity(shape.len());
        for (&d, &(a, b)) in shape.iter().zip(pads) {
            crop.push((a.min(0).unsigned_abs(), d - b.min(0).unsigned_abs()));
            grow.push((a.max(0) as usize, b.max(0) as usize));
        }
        super::checked_numel(op, &padded)?;
        Ok((self.shrink_to(&crop)?, grow))
    }

    /// PAD by `(before, after)` per axis, filling with `value` (a WHERE
    /// over a padded mask when `value` is not zero); errors name `op`.
    #[track_caller]
    pub(super) fn pad_with(
        &self,
        op: &str,
        pads: &[(usize, usize)],
        value: morok_core::ConstValue,
    ) -> Result<Tensor> {
        let padded = self.pad_to(op, pads)?;
        if value.is_zero() || pads.iter().all(|&p| p == (0, 0)) {
            return Ok(padded);
        }
        let g = self.graph()?;
        let mask = Tensor::constant(
            morok_core::ConstValue::Bool(true),
            ScalarType::Bool,
            &g.shape,
        )
        .pad_to(op, pads)?;
        let fill = Tensor::constant(value, g.dtype, padded.shape());
        Tensor::alu(Op::Where, &[&mask, &padded, &fill])
    }

    /// Keeps `[begin, end)` on every axis.
    #[track_caller]
    pub fn shrink(&self, bounds: &[(usize, usize)]) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        shrink_shape(&shape, bounds).located()?;
        self.shrink_to(bounds)
    }

    /// Python-style slicing of the leading axes (`t[a:b:s, ...]`); axes
    /// without a [`Slice`] are kept whole.
    #[track_caller]
    pub fn slice(&self, slices: &[Slice]) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        slice_shape(&shape, slices).located()?;
        let mut x = self.clone();
        for (axis, s) in slices.iter().enumerate() {
            x = x.slice_axis(axis, *s)?;
        }
        Ok(x)
    }

    /// One axis of `slice`: FLIP for a negative step, SHRINK to the
    /// span, then PAD + RESHAPE + SHRINK to pick every `step`-th element.
    #[track_caller]
    pub(super) fn slice_axis(&self, axis: usize, s: Slice) -> Result<Tensor> {
        let len = self.shape()[axis];
        let (start, count) = s.resolve(len);
        let step = s.step.unsigned_abs();
        let (x, start) = if s.step < 0 {
            (
                self.flip_axes(&[axis])?,
                len.saturating_sub(1).saturating_sub(start),
            )
        } else {
            (self.clone(), start)
        };
        let span = if count == 0 {
            0
        } else {
            (count - 1) * step + 1
        };
        let mut bounds: Vec<(usize, usize)> = x.shape().iter().map(|&d| (0, d)).collect();
        bounds[axis] = (start, start + span);
        let x = x.shrink_to(&bounds)?;
        if step == 1 || count <= 1 {
            return Ok(x);
        }
        let mut pads = vec![(0, 0); x.ndim()];
        pads[axis] = (0, count * step - span);
        let x = x.pad_to("slice", &pads)?;
        let mut split: Vec<usize> = x.shape().to_vec();
        split[axis] = count;
        split.insert(axis + 1, step);
        let x = x.reshape_to(&split)?;
        let mut pick: Vec<(usize, usize)> = split.iter().map(|&d| (0, d)).collect();
        pick[axis + 1] = (0, 1);
        let x = x.shrink_to(&pick)?;
        split.remove(axis + 1);
        x.reshape_to(&split)
    }

    /// Reverses the order of elements along `axes`.
    #[track_caller]
    pub fn flip(&self, axes: &[isize]) -> Result<Tensor> {
        let norm = flip_axes(&self.graph()?.shape, axes).located()?;
        if self.ndim() == 0 {
            return Ok(self.clone());
        }
        self.flip_axes(&norm)
    }

    /// Removes axis `dim`, which must have size 1.
    #[track_caller]
    pub fn squeeze(&self, dim: isize) -> Result<Tensor> {
        let out = squeeze_shape(&self.graph()?.shape, dim).located()?;
        self.reshape_to(&out)
    }

    /// Removes every axis of size 1 (PyTorch's `squeeze()` without a dim).
    #[track_caller]
    pub fn squeeze_all(&self) -> Result<Tensor> {
        let out = squeeze_all_shape(&self.graph()?.shape);
        self.reshape_to(&out)
    }

    /// Splits axis `dim` into axes of `sizes` (one may be `-1`, inferred),
    /// whose product is its length: PyTorch's `unflatten`, the inverse of
    /// [`Tensor::flatten`].
    #[track_caller]
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<Tensor> {
        let sizes: Vec<ReshapeDim<usize>> =
            sizes.iter().map(|&d| ReshapeDim::from_signed(d)).collect();
        let out = unflatten_shape(&self.graph()?.shape, dim, &sizes).located()?;
        self.reshape_to(&out)
    }

    /// Inserts an axis of size 1 at `dim` (`-1` appends).
    #[track_caller]
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        let out = unsqueeze_shape(&self.graph()?.shape, dim).located()?;
        self.reshape_to(&out)
    }

    /// Merges axes `start..=end` into one.
    #[track_caller]
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        let out = flatten_shape(&self.graph()?.shape, start, end).located()?;
        self.reshape_to(&out)
    }

    /// Tiles the tensor `reps[i]` times along axis `i` (like
    /// `torch.Tensor.repeat`; extra leading entries add axes).
    #[track_caller]
    pub fn repeat(&self, reps: &[usize]) -> Result<Tensor> {
        self.repeat_as("repeat", reps)
    }

    /// [`Tensor::repeat`] with errors naming `op`.
    #[track_caller]
    pub(super) fn repeat_as(&self, op: &str, reps: &[usize]) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        repeat_shape(op, &shape, reps).located()?;
        let mut base = vec![1; reps.len() - shape.len()];
        base.extend_from_slice(&shape);
        let mut grown = base.clone();
        grown.extend_from_slice(reps);
        super::checked_numel(op, &grown)?;
        let mut interleaved = Vec::with_capacity(2 * base.len());
        let mut expanded = Vec::with_capacity(2 * base.len());
        for (&d, &r) in base.iter().zip(reps) {
            interleaved.extend([1, d]);
            expanded.extend([r, d]);
        }
        let out: Vec<usize> = base.iter().zip(reps).map(|(&d, &r)| d * r).collect();
        self.reshape_to(&interleaved)?
            .expand_to(&expanded)?
            .reshape_to(&out)
    }
}
