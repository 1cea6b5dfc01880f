//! Indexing: PyTorch's `index` (`t[...]`), `gather` and `index_select`,
//! and the checks the other index families share; the writes and masks
//! (`scatter*`, `masked_*`, `nonzero`, `one_hot`) are in `scatter.rs`,
//! the index-free selections (`tril`, `diag`, `roll`, `unfold`, ...) in
//! `selection.rs`.
//!
//! Data-dependent selection is a composition of existing primitives: an
//! index `i` into an axis of length `n` becomes the one-hot comparison
//! `i == [0, 1, ..., n - 1]`, and the selected element is the sum of the
//! elements it marks. The compiled code therefore never loads from an
//! address computed from data.
//!
//! # Out-of-range indices held in tensors
//!
//! An index held in a tensor cannot be checked when the graph is built.
//! Its behavior is defined instead: an index outside `[0, n)` (after
//! negative indices are wrapped, where the op wraps them) matches no
//! element, so a read (`index`, `gather`, `index_select`) yields 0, a
//! write (`scatter`, `scatter_add`, `scatter_reduce`) is dropped, and
//! `one_hot` gives a row of zeros. Nothing is read or written out of
//! bounds. Constant indices (`Index::Int`, slices) are checked at once.

use super::movement::dim_index;
use super::{Slice, Tensor};
use crate::error::{Error, Located, Result};
use morok_core::shape::{
    consumed_axes, gather_shape, index_select_shape, index_shape, IndexEntry, ShapeError,
};
use morok_core::uop::ReduceOp;
use morok_core::{ConstValue, ScalarType};

/// One entry of [`Tensor::index`], as in `t[a, b:c, None, idx, ...]`.
#[derive(Clone, Debug)]
pub enum Index {
    /// A single position (negative counts from the end); removes the axis.
    /// Out of range is an error.
    Int(isize),
    /// A [`Slice`] of the axis (Python semantics, clamped).
    Slice(Slice),
    /// A new axis of size 1 (`None` in Python).
    NewAxis,
    /// All remaining axes (`...`); at most one.
    Ellipsis,
    /// An integer tensor of positions (advanced indexing): negative
    /// positions count from the end; see the module docs for positions
    /// out of range. A bool tensor is a mask over as many axes as it has
    /// (their sizes must match) and indexes like its `nonzero()`
    /// coordinates, so, as with [`Tensor::nonzero`], its count of true
    /// elements is realized (one kernel runs) when `index` is called.
    Tensor(Tensor),
}

/// An error of `op` about the shapes `shapes`.
#[track_caller]
pub(super) fn shape_error(op: &str, shapes: &[&[usize]], message: impl Into<String>) -> Error {
    Error::shape(ShapeError::new(op, shapes, message))
}

/// Checks that `index` holds integers (errors of `op` name its shape).
#[track_caller]
pub(super) fn integer_index(op: &str, index: &Tensor) -> Result<()> {
    expect_dtype(
        op,
        "index tensor",
        index,
        ScalarType::is_int,
        "an integer type",
    )
}

/// Checks that `t` (the `role` argument of `op`) has a dtype for which
/// `ok` holds, described as `wanted` in the error with `t`'s shape.
#[track_caller]
pub(super) fn expect_dtype(
    op: &str,
    role: &str,
    t: &Tensor,
    ok: fn(ScalarType) -> bool,
    wanted: &str,
) -> Result<()> {
    let g = t.graph()?;
    if !ok(g.dtype) {
        return Err(Error::dtype(
            op,
            format!(
                "the {role} {:?} has dtype {}, not {wanted}",
                g.shape.as_slice(),
                g.dtype
            ),
        ));
    }
    Ok(())
}

impl Tensor {
    /// The elements of `self` along normalized `axis` at the positions in
    /// `idx`, which has `self`'s rank and, on every other axis, `self`'s
    /// size or 1 (broadcast). The result has `idx`'s length on `axis`.
    /// Positions outside `[0, n)` select 0 (one-hot sum, see the module
    /// docs). Errors name `op`.
    #[track_caller]
    fn select_along(&self, op: &str, axis: usize, idx: &Tensor) -> Result<Tensor> {
        let n = self.shape()[axis];
        let dtype = self.graph()?.dtype;
        let mut hit_shape: Vec<usize> = idx
            .shape()
            .iter()
            .zip(self.shape())
            .map(|(&a, &b)| a.max(b))
            .collect();
        hit_shape[axis] = idx.shape()[axis];
        hit_shape.insert(axis + 1, n);
        super::checked_numel(op, &hit_shape)?;
        let idx = idx.cast_to(ScalarType::I64)?;
        let mut count_shape = vec![1; self.ndim() + 1];
        count_shape[axis + 1] = n;
        let positions = Tensor::counting(op, n, ScalarType::I64)?.reshape_to(&count_shape)?;
        let hit = idx.unsqueeze_at(axis + 1)?.eq(&positions)?;
        let zero = Tensor::constant(ConstValue::zero(dtype), dtype, &[]);
        let picked = hit.where_(&self.unsqueeze_at(axis)?, &zero)?;
        let combine = if dtype.is_bool() {
            ReduceOp::Max
        } else {
            ReduceOp::Add
        };
        picked.reduce_to(combine, &[axis + 1], false)
    }

    /// A size-1 axis inserted at normalized position `at`.
    #[track_caller]
    pub(super) fn unsqueeze_at(&self, at: usize) -> Result<Tensor> {
        let mut shape = self.shape().to_vec();
        shape.insert(at, 1);
        self.reshape_to(&shape)
    }

    /// `idx` with negative positions wrapped by `n` (in `i64`).
    #[track_caller]
    fn wrap_negative(idx: &Tensor, n: usize) -> Result<Tensor> {
        let idx = idx.cast_to(ScalarType::I64)?;
        idx.lt(0i64)?.where_(&idx.add(n as i64)?, &idx)
    }

    /// The shapes of `self` and of the integer `index`, and `dim`
    /// normalized (errors name `op`).
    #[track_caller]
    pub(super) fn index_args(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
    ) -> Result<(Vec<usize>, Vec<usize>, usize)> {
        let (shape, ishape) = (self.graph()?.shape.to_vec(), index.graph()?.shape.to_vec());
        integer_index(op, index)?;
        let d = dim_index(op, &shape, dim)?;
        Ok((shape, ishape, d))
    }

    /// PyTorch's `torch.gather(self, dim, index)`: `out[i][j] =
    /// self[index[i][j]][j]` for `dim = 0`, and so on. `index` has
    /// `self`'s rank and no axis longer than `self`'s (except `dim`);
    /// the result has `index`'s shape. Out-of-range positions give 0.
    #[track_caller]
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let op = "gather";
        let (shape, ishape, d) = self.index_args(op, dim, index)?;
        if shape.is_empty() && ishape.is_empty() {
            return self
                .unsqueeze_at(0)?
                .select_along(op, 0, &index.reshape_to(&[1])?)?
                .reshape_to(&[]);
        }
        gather_shape(&shape, &ishape, dim).located()?;
        let bounds: Vec<(usize, usize)> = shape
            .iter()
            .zip(&ishape)
            .enumerate()
            .map(|(i, (&s, &k))| if i == d { (0, s) } else { (0, k) })
            .collect();
        self.shrink_to(&bounds)?.select_along(op, d, index)
    }

    /// PyTorch's `index_select(dim, index)`: the slices of axis `dim` at
    /// the positions of the 1-D integer tensor `index` (negative positions
    /// count from the end; out of range gives 0).
    #[track_caller]
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let op = "index_select";
        let (shape, ishape, d) = self.index_args(op, dim, index)?;
        index_select_shape(&shape, &ishape, dim).located()?;
        let x = if shape.is_empty() {
            self.reshape_to(&[1])?
        } else {
            self.clone()
        };
        let k = index.numel();
        let mut at = vec![1; x.ndim()];
        at[d] = k;
        let idx = Tensor::wrap_negative(index, x.shape()[d])?.reshape_to(&at)?;
        let out = x.select_along(op, d, &idx)?;
        if shape.is_empty() {
            out.reshape_to(&ishape)
        } else {
            Ok(out)
        }
    }

    /// PyTorch indexing, `t[...]`: integers remove an axis, slices keep a
    /// strided part of it, [`Index::NewAxis`] inserts one, [`Index::Ellipsis`]
    /// stands for the axes not named, and integer tensors select
    /// (advanced indexing). As in PyTorch, integers and slices are applied
    /// first; the index tensors are then broadcast together, and their
    /// shape replaces the axes they index where those are adjacent, or
    /// comes first otherwise.
    #[track_caller]
    pub fn index(&self, indices: &[Index]) -> Result<Tensor> {
        let op = "index";
        let shape = self.graph()?.shape.clone();
        // Index tensors hold integers (bool ones are masks), checked first
        // as the op table's rules do.
        for entry in indices {
            if let Index::Tensor(t) = entry {
                if !t.dtype().is_bool() {
                    integer_index(op, t)?;
                }
            }
        }
        // The entries' shapes, with each mask's `nonzero()` coordinates.
        let mut entries: Vec<IndexEntry<usize>> = Vec::with_capacity(indices.len());
        let mut masks: Vec<Option<Tensor>> = Vec::with_capacity(indices.len());
        for entry in indices {
            let mut coords = None;
            entries.push(match entry {
                Index::Int(i) => IndexEntry::Int(*i),
                Index::Slice(s) => IndexEntry::Slice(*s),
                Index::NewAxis => IndexEntry::NewAxis,
                Index::Ellipsis => IndexEntry::Ellipsis,
                Index::Tensor(t) if t.dtype().is_bool() => {
                    let c = t.nonzero()?;
                    let count = c.shape()[0];
                    coords = Some(c);
                    IndexEntry::Mask {
                        shape: t.graph()?.shape.to_vec(),
                        count,
                    }
                }
                Index::Tensor(t) => IndexEntry::Tensor(t.graph()?.shape.to_vec()),
            });
            masks.push(coords);
        }
        index_shape(&shape, &entries).located()?;
        let consuming = consumed_axes(&entries);
        // Basic indexing, axis by axis; index tensors keep their axis.
        let mut x = self.clone();
        let mut axis = 0; // the next axis of `x`
        let mut tensors: Vec<(usize, Tensor)> = Vec::new();
        for (entry, coords) in indices.iter().zip(&masks) {
            match entry {
                Index::Ellipsis => axis += shape.len() - consuming,
                Index::NewAxis => {
                    x = x.unsqueeze_at(axis)?;
                    axis += 1;
                }
                Index::Slice(s) => {
                    x = x.slice_axis(axis, *s)?;
                    axis += 1;
                }
                Index::Int(i) => {
                    let n = x.shape()[axis];
                    // In range: `index_shape` checked it.
                    let p = if *i < 0 {
                        n.saturating_sub(i.unsigned_abs())
                    } else {
                        i.unsigned_abs()
                    };
                    let mut b: Vec<(usize, usize)> = x.shape().iter().map(|&d| (0, d)).collect();
                    b[axis] = (p, p + 1);
                    let mut out = x.shape().to_vec();
                    out.remove(axis);
                    x = x.shrink_to(&b)?.reshape_to(&out)?;
                }
                Index::Tensor(t) => match coords {
                    Some(c) => axis = x.bool_mask_index(c, t.ndim(), axis, &mut tensors)?,
                    None => {
                        tensors.push((axis, t.clone()));
                        axis += 1;
                    }
                },
            }
        }
        if tensors.is_empty() {
            return Ok(x);
        }
        x.advanced_index(op, &tensors)
    }

    /// A bool mask over `k` axes in [`Tensor::index`] at axis `axis` of
    /// `self`, given by its `nonzero()` coordinates `coords`: adds one
    /// index tensor per covered axis to `tensors`. A 0-d mask adds a new
    /// axis (of size 1 where true, 0 where false), as in PyTorch. Returns
    /// the next axis; `self` gets the new axis of a 0-d mask.
    #[track_caller]
    fn bool_mask_index(
        &mut self,
        coords: &Tensor,
        k: usize,
        axis: usize,
        tensors: &mut Vec<(usize, Tensor)>,
    ) -> Result<usize> {
        let count = coords.shape()[0];
        if k == 0 {
            *self = self.unsqueeze_at(axis)?;
            let zero = Tensor::constant(ConstValue::Int(0), ScalarType::I64, &[count]);
            tensors.push((axis, zero));
            return Ok(axis + 1);
        }
        for j in 0..k {
            let column = coords.shrink_to(&[(0, count), (j, j + 1)])?;
            tensors.push((axis + j, column.reshape_to(&[count])?));
        }
        Ok(axis + k)
    }

    /// The advanced-indexing step of [`Tensor::index`]: `tensors` pairs
    /// an axis of `self` with its index tensor.
    #[track_caller]
    fn advanced_index(&self, op: &str, tensors: &[(usize, Tensor)]) -> Result<Tensor> {
        let shape = self.shape().to_vec();
        let mut joint: Vec<usize> = Vec::new();
        for (_, t) in tensors {
            joint = morok_core::shape::broadcast_shapes(op, &joint, t.shape())
                .located()?
                .to_vec();
        }
        super::checked_numel(op, &joint)?;
        // Move the indexed axes first and merge them into one axis; the
        // merged position is valid only where every position is in range.
        let axes: Vec<usize> = tensors.iter().map(|(a, _)| *a).collect();
        let rest: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let mut perm = axes.clone();
        perm.extend(&rest);
        let merged: usize = axes.iter().map(|&a| shape[a]).product();
        let mut flat_shape = vec![merged];
        flat_shape.extend(rest.iter().map(|&a| shape[a]));
        let x = self.permute_to(&perm)?.reshape_to(&flat_shape)?;
        let mut linear = Tensor::constant(ConstValue::Int(0), ScalarType::I64, &joint);
        let mut valid = Tensor::constant(ConstValue::Bool(true), ScalarType::Bool, &joint);
        let mut stride = merged;
        for (a, t) in tensors {
            let n = shape[*a];
            stride /= n.max(1);
            let p = Tensor::wrap_negative(t, n)?.expand_to(&joint)?;
            valid = valid.logical_and(&p.ge(0i64)?.logical_and(&p.lt(n as i64)?)?)?;
            linear = linear.add(&p.mul(stride as i64)?)?;
        }
        let linear = valid.where_(&linear, -1i64)?;
        let count: usize = joint.iter().product();
        let mut at = vec![1; flat_shape.len()];
        at[0] = count;
        let picked = x.select_along(op, 0, &linear.reshape_to(&at)?)?;
        let mut out = joint.clone();
        out.extend(rest.iter().map(|&a| shape[a]));
        let picked = picked.reshape_to(&out)?;
        let adjacent = axes.windows(2).all(|w| w[1] == w[0] + 1);
        let first = axes[0];
        if !adjacent || first == 0 {
            return Ok(picked);
        }
        // Put the index dimensions where the indexed axes were.
        let b = joint.len();
        let mut perm: Vec<usize> = (b..b + first).collect();
        perm.extend(0..b);
        perm.extend(b + first..out.len());
        picked.permute_to(&perm)
    }
}
