//! Joining and cutting along an axis (`cat`, `stack`, `split`, `chunk`)
//! and the sliding windows (`pool`) that convolutions and pools are built
//! on: movement ops over several tensors or several views of one.

use super::movement::dim_index;
use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{cat_shape, stack_shape, ShapeError};
use morok_core::uop::{Op, Shape};
use morok_core::ScalarType;

impl Tensor {
    /// Joins tensors along axis `dim`; all other axes must match. Dtypes
    /// are promoted. Each part is padded to the full length and the parts
    /// are added (OR for bool).
    #[track_caller]
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        Tensor::cat_as("cat", tensors, dim)
    }

    /// [`Tensor::cat`] with errors naming `op`.
    #[track_caller]
    pub(super) fn cat_as(op: &str, tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let mut shapes = Vec::with_capacity(tensors.len());
        let mut dtypes = Vec::with_capacity(tensors.len());
        for t in tensors {
            let g = t.graph()?;
            shapes.push(g.shape.to_vec());
            dtypes.push(g.dtype);
        }
        let refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
        let joined = cat_shape(op, &refs, dim).located()?;
        let d = dim_index(op, &joined, dim)?;
        super::checked_numel(op, &joined)?;
        let none = || Error::argument(op, "needs at least one tensor");
        let dtype = dtypes
            .into_iter()
            .reduce(ScalarType::promote)
            .ok_or_else(none)?;
        let combine = if dtype == ScalarType::Bool {
            Op::Or
        } else {
            Op::Add
        };
        let total = joined[d];
        let mut acc: Option<Tensor> = None;
        let mut offset = 0;
        for (t, shape) in tensors.iter().zip(&shapes) {
            let len = shape[d];
            let mut pads = vec![(0, 0); shape.len()];
            pads[d] = (offset, total - offset - len);
            offset += len;
            let part = t.cast_to(dtype)?.pad_to(op, &pads)?;
            acc = Some(match acc {
                None => part,
                Some(a) => Tensor::alu(combine, &[&a, &part])?,
            });
        }
        acc.ok_or_else(none)
    }

    /// Stacks equally shaped tensors along a new axis `dim`.
    #[track_caller]
    pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let mut shapes = Vec::with_capacity(tensors.len());
        for t in tensors {
            shapes.push(t.graph()?.shape.to_vec());
        }
        let refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
        let stacked = stack_shape(&refs, dim).located()?;
        let mut part_shape = stacked.to_vec();
        part_shape[dim_index("stack", &stacked, dim)?] = 1;
        let mut parts = Vec::with_capacity(tensors.len());
        for t in tensors {
            parts.push(t.reshape_to(&part_shape)?);
        }
        let refs: Vec<&Tensor> = parts.iter().collect();
        Tensor::cat_as("stack", &refs, dim)
    }

    /// Splits axis `dim` into consecutive parts of the given sizes, which
    /// must add up to the axis length.
    #[track_caller]
    pub fn split(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        self.split_as("split", sizes, dim)
    }

    /// The shape and the normalized axis `dim` of a tensor that has at least
    /// one axis; a scalar is a shape error of `op` saying `why`.
    #[track_caller]
    fn nonscalar_axis(&self, op: &str, dim: isize, why: &str) -> Result<(Shape, usize)> {
        let shape = self.graph()?.shape.clone();
        let d = self.axis(op, dim)?;
        if shape.is_empty() {
            return Err(Error::shape(ShapeError::new(op, &[&shape], why)));
        }
        Ok((shape, d))
    }

    /// [`Tensor::split`] with errors naming `op`.
    #[track_caller]
    fn split_as(&self, op: &str, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        let (shape, d) =
            self.nonscalar_axis(op, dim, "a zero-dimensional tensor has no axis to split")?;
        let total = sizes.iter().try_fold(0usize, |acc, &n| acc.checked_add(n));
        if total != Some(shape[d]) {
            return Err(Error::shape(ShapeError::new(
                op,
                &[&shape],
                format!(
                    "sizes {sizes:?} do not add up to axis {d} of length {}",
                    shape[d]
                ),
            )));
        }
        let mut out = Vec::with_capacity(sizes.len());
        let mut offset = 0;
        for &n in sizes {
            let mut bounds: Vec<(usize, usize)> = shape.iter().map(|&s| (0, s)).collect();
            bounds[d] = (offset, offset + n);
            out.push(self.shrink_to(&bounds)?);
            offset += n;
        }
        Ok(out)
    }

    /// Splits axis `dim` into `chunks` parts of equal size (the last one
    /// smaller when the length does not divide), like `torch.chunk`.
    #[track_caller]
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        if chunks == 0 {
            return Err(Error::argument(
                "chunk",
                "the number of chunks must be positive",
            ));
        }
        let d = self.axis("chunk", dim)?;
        let Some(&len) = self.shape().get(d) else {
            return Err(Error::shape(ShapeError::new(
                "chunk",
                &[self.shape()],
                "a zero-dimensional tensor has no axis to split",
            )));
        };
        let size = len.div_ceil(chunks).max(1);
        self.split_as("chunk", &parts_of(len, size), dim)
    }

    /// Splits axis `dim` into consecutive parts of `size` elements, the
    /// last one smaller when `size` does not divide the length (PyTorch's
    /// `split` with an integer).
    #[track_caller]
    pub fn split_every(&self, size: usize, dim: isize) -> Result<Vec<Tensor>> {
        if size == 0 {
            return Err(Error::argument("split", "the part size must be positive"));
        }
        let (shape, d) = self.nonscalar_axis(
            "split",
            dim,
            "a zero-dimensional tensor has no axis to split",
        )?;
        self.split_as("split", &parts_of(shape[d], size), dim)
    }

    /// Sliding windows over the last `kernel.len()` axes: the result has
    /// shape `[..., o_1, .., o_n, k_1, .., k_n]` where window `o` of axis
    /// `j` starts at `o * stride[j]` and picks every `dilation[j]`-th
    /// element. Built from movement ops only (repeat, shrink, reshape,
    /// permute).
    #[track_caller]
    pub(super) fn pool(
        &self,
        op: &str,
        kernel: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        let n = kernel.len();
        if shape.len() < n || stride.len() != n || dilation.len() != n {
            return Err(Error::shape(ShapeError::new(
                op,
                &[&shape],
                format!("a {n}-d window needs {n} trailing axes"),
            )));
        }
        let lead = shape.len() - n;
        let inner = &shape[lead..];
        // Per axis: output count o and row width W ≡ d (mod i), at least
        // o*s, so that row `a` of the [k, W] view of the repeated axis
        // starts at element a*d. Checked: huge arguments are errors.
        let mut outs = Vec::with_capacity(n);
        let mut steps = Vec::with_capacity(n);
        let mut widths = Vec::with_capacity(n);
        let mut reps = vec![1; lead];
        for j in 0..n {
            let (i, k, s, d) = (inner[j], kernel[j], stride[j], dilation[j]);
            let sizes = d
                .checked_mul(k.saturating_sub(1))
                .and_then(|r| r.checked_add(1))
                .filter(|&reach| k > 0 && s > 0 && d > 0 && i >= reach)
                .and_then(|reach| {
                    let o = (i - reach) / s + 1;
                    // A single window does not step: its stride is moot.
                    let s = if o == 1 { 1 } else { s };
                    let rows = o.checked_mul(s)?.saturating_sub(d).div_ceil(i).max(1);
                    let w = rows.checked_mul(i)?.checked_add(d)?;
                    let r = k.checked_mul(w)?.div_ceil(i);
                    r.checked_mul(i)?.checked_mul(k)?;
                    Some((o, s, w, r))
                });
            let Some((o, s, w, r)) = sizes else {
                return Err(Error::argument(
                    op,
                    format!(
                        "window {kernel:?} (stride {stride:?}, dilation {dilation:?}) \
                         does not fit input {shape:?}"
                    ),
                ));
            };
            outs.push(o);
            steps.push(s);
            widths.push(w);
            reps.push(r);
        }
        let x = self.repeat_as(op, &reps)?;
        let keep: Vec<usize> = shape[..lead].to_vec();
        let full = |tail: &[(usize, usize)]| {
            let mut b: Vec<(usize, usize)> = keep.iter().map(|&d| (0, d)).collect();
            b.extend_from_slice(tail);
            b
        };
        let dims = |tail: &[usize]| {
            let mut s = keep.clone();
            s.extend_from_slice(tail);
            s
        };
        let x = x.shrink_to(&full(
            &(0..n)
                .map(|j| (0, kernel[j] * widths[j]))
                .collect::<Vec<_>>(),
        ))?;
        let x = x.reshape_to(&dims(
            &(0..n)
                .flat_map(|j| [kernel[j], widths[j]])
                .collect::<Vec<_>>(),
        ))?;
        let x = x.shrink_to(&full(
            &(0..n)
                .flat_map(|j| [(0, kernel[j]), (0, outs[j] * steps[j])])
                .collect::<Vec<_>>(),
        ))?;
        let x = x.reshape_to(&dims(
            &(0..n)
                .flat_map(|j| [kernel[j], outs[j], steps[j]])
                .collect::<Vec<_>>(),
        ))?;
        let x = x.shrink_to(&full(
            &(0..n)
                .flat_map(|j| [(0, kernel[j]), (0, outs[j]), (0, 1)])
                .collect::<Vec<_>>(),
        ))?;
        let x = x.reshape_to(&dims(
            &(0..n)
                .flat_map(|j| [kernel[j], outs[j]])
                .collect::<Vec<_>>(),
        ))?;
        let mut perm: Vec<usize> = (0..lead).collect();
        perm.extend((0..n).map(|j| lead + 2 * j + 1));
        perm.extend((0..n).map(|j| lead + 2 * j));
        x.permute_to(&perm)
    }
}

/// The sizes of consecutive parts of `size` (> 0) covering `len`, the last
/// one smaller when `size` does not divide it.
fn parts_of(len: usize, size: usize) -> Vec<usize> {
    let mut sizes = vec![size; len / size];
    if !len.is_multiple_of(size) {
        sizes.push(len % size);
    }
    sizes
}
