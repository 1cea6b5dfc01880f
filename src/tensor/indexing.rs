//! Indexing: PyTorch's `index` (`t[...]`), `gather`, `scatter*`,
//! `index_select`, masks, and the index-free selections `tril`, `triu`,
//! `diag`, `diagonal`, `roll`, `meshgrid`, `repeat_interleave` (also with
//! a tensor of counts), `unfold`.
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
use morok_core::shape::ShapeError;
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

/// How [`Tensor::scatter_reduce`] combines the values written to one
/// position (PyTorch's `reduce` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    /// `"sum"`.
    Sum,
    /// `"prod"`.
    Prod,
    /// `"mean"` (integers divide with floor).
    Mean,
    /// `"amax"`.
    Amax,
    /// `"amin"`.
    Amin,
}

/// The order of [`Tensor::meshgrid`]'s outputs' axes (PyTorch's
/// `indexing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshIndexing {
    /// `"ij"`: output axis `i` follows input `i`.
    Ij,
    /// `"xy"`: the first two axes are swapped (Cartesian).
    Xy,
}

/// An error of `op` about the shapes `shapes`.
#[track_caller]
fn shape_error(op: &str, shapes: &[&[usize]], message: impl Into<String>) -> Error {
    Error::shape(ShapeError::new(op, shapes, message))
}

/// Whether an index of shape `index` has `shape`'s rank and no axis
/// longer than `shape`'s, except axis `d`.
fn fits_except(index: &[usize], shape: &[usize], d: usize) -> bool {
    index.len() == shape.len()
        && index
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(i, (a, b))| i == d || a <= b)
}

/// Checks that `index` holds integers (errors of `op` name its shape).
#[track_caller]
fn integer_index(op: &str, index: &Tensor) -> Result<()> {
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
fn expect_dtype(
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
    fn index_args(
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
        let fits = fits_except(&ishape, &shape, d);
        if !fits {
            return Err(shape_error(
                op,
                &[&shape, &ishape],
                format!("the index must have the input's rank and fit it except on axis {d}"),
            ));
        }
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
        if ishape.len() > 1 {
            return Err(shape_error(
                op,
                &[&shape, &ishape],
                "the index must be 0-d or 1-D",
            ));
        }
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
        let consuming: usize = indices
            .iter()
            .map(|i| match i {
                Index::NewAxis | Index::Ellipsis => 0,
                Index::Tensor(t) if t.dtype().is_bool() => t.ndim(),
                _ => 1,
            })
            .sum();
        let ellipses = indices
            .iter()
            .filter(|i| matches!(i, Index::Ellipsis))
            .count();
        if ellipses > 1 || consuming > shape.len() {
            return Err(shape_error(
                op,
                &[&shape],
                format!(
                    "{consuming} indices for {} axes{}",
                    shape.len(),
                    if ellipses > 1 {
                        " and more than one ellipsis"
                    } else {
                        ""
                    }
                ),
            ));
        }
        // Basic indexing, axis by axis; index tensors keep their axis.
        let mut x = self.clone();
        let mut axis = 0; // the next axis of `x`
        let mut tensors: Vec<(usize, Tensor)> = Vec::new();
        for entry in indices {
            match entry {
                Index::Ellipsis => axis += shape.len() - consuming,
                Index::NewAxis => {
                    x = x.unsqueeze_at(axis)?;
                    axis += 1;
                }
                Index::Slice(s) => {
                    if s.step == 0 {
                        return Err(Error::argument(op, format!("{s:?} has step 0")));
                    }
                    x = x.slice_axis(axis, *s)?;
                    axis += 1;
                }
                Index::Int(i) => {
                    let n = x.shape()[axis];
                    let p = if *i < 0 {
                        *i as i128 + n as i128
                    } else {
                        *i as i128
                    };
                    if p < 0 || p >= n as i128 {
                        return Err(shape_error(
                            op,
                            &[&shape],
                            format!("index {i} is out of range for an axis of size {n}"),
                        ));
                    }
                    let mut b: Vec<(usize, usize)> = x.shape().iter().map(|&d| (0, d)).collect();
                    b[axis] = (p as usize, p as usize + 1);
                    let mut out = x.shape().to_vec();
                    out.remove(axis);
                    x = x.shrink_to(&b)?.reshape_to(&out)?;
                }
                Index::Tensor(t) if t.dtype().is_bool() => {
                    axis = x.bool_mask_index(op, t, axis, &mut tensors)?;
                }
                Index::Tensor(t) => {
                    integer_index(op, t)?;
                    tensors.push((axis, t.clone()));
                    axis += 1;
                }
            }
        }
        if tensors.is_empty() {
            return Ok(x);
        }
        x.advanced_index(op, &tensors)
    }

    /// A bool mask in [`Tensor::index`] at axis `axis` of `self`: checks
    /// that it matches the axes it covers, realizes its `nonzero()`
    /// coordinates and adds one index tensor per covered axis to
    /// `tensors`. A 0-d mask adds a new axis (of size 1 where true, 0
    /// where false), as in PyTorch. Returns the next axis; `self` gets
    /// the new axis of a 0-d mask.
    #[track_caller]
    fn bool_mask_index(
        &mut self,
        op: &str,
        mask: &Tensor,
        axis: usize,
        tensors: &mut Vec<(usize, Tensor)>,
    ) -> Result<usize> {
        let ms = mask.graph()?.shape.clone();
        let k = ms.len();
        let covered = self.shape().get(axis..axis + k);
        if covered != Some(&ms[..]) {
            return Err(shape_error(
                op,
                &[self.shape(), &ms],
                format!("the bool mask does not match the axes from {axis} it indexes"),
            ));
        }
        let coords = mask.nonzero()?;
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

    /// The common checks of the scatter family: `index` and `src` have
    /// `self`'s rank, `index` fits `src` and (except on `dim`) `self`.
    /// Returns the normalized axis and `src` cut to `index`'s shape.
    #[track_caller]
    fn scatter_args(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<(usize, Tensor)> {
        let (shape, ishape, d) = self.index_args(op, dim, index)?;
        let sshape = src.graph()?.shape.clone();
        let fits = !shape.is_empty()
            && sshape.len() == shape.len()
            && ishape.iter().zip(&sshape).all(|(a, b)| a <= b)
            && fits_except(&ishape, &shape, d);
        if !fits {
            return Err(shape_error(
                op,
                &[&shape, &ishape, &sshape],
                format!(
                    "input, index and src must have one rank (at least 1), the index must fit \
                     src, and the input except on axis {d}"
                ),
            ));
        }
        let cut: Vec<(usize, usize)> = ishape.iter().map(|&k| (0, k)).collect();
        let dtype = self.graph()?.dtype;
        Ok((d, src.shrink_to(&cut)?.cast_to(dtype)?))
    }

    /// The one-hot hits of a scatter: `[..., k, n, ...]` (index axis `d`,
    /// target axis `d + 1`), true where `index` writes to position `m`.
    #[track_caller]
    fn scatter_hits(&self, op: &str, d: usize, index: &Tensor) -> Result<Tensor> {
        let n = self.shape()[d];
        let mut hit_shape = index.shape().to_vec();
        hit_shape.insert(d + 1, n);
        super::checked_numel(op, &hit_shape)?;
        let mut count_shape = vec![1; self.ndim() + 1];
        count_shape[d + 1] = n;
        let positions = Tensor::counting(op, n, ScalarType::I64)?.reshape_to(&count_shape)?;
        index
            .cast_to(ScalarType::I64)?
            .unsqueeze_at(d + 1)?
            .eq(&positions)
    }

    /// Reduces the scattered `[..., k, n, ...]` values over the index axis
    /// `d` and pads the result to `self`'s shape with zeros.
    #[track_caller]
    fn scatter_collect(&self, op: &str, d: usize, vals: &Tensor, how: ReduceOp) -> Result<Tensor> {
        let r = vals.reduce_to(how, &[d], false)?;
        let pads: Vec<(usize, usize)> = self
            .shape()
            .iter()
            .zip(r.shape())
            .map(|(&s, &k)| (0, s - k))
            .collect();
        r.pad_to(op, &pads)
    }

    /// PyTorch's `scatter(dim, index, src)`: a copy of `self` with
    /// `out[index[i][j]][j] = src[i][j]` (for `dim = 0`). Where several
    /// entries write one position, the last along `dim` wins. Out-of-range
    /// positions are dropped.
    #[track_caller]
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let op = "scatter";
        let (d, src) = self.scatter_args(op, dim, index, src)?;
        let hits = self.scatter_hits(op, d, index)?;
        let k = index.shape()[d];
        // Rank of each writer along `dim`, plus one (0: no write).
        let mut rank_shape = vec![1; self.ndim() + 1];
        rank_shape[d] = k;
        let rank = Tensor::counting(op, k, ScalarType::I64)?
            .add(1i64)?
            .reshape_to(&rank_shape)?;
        let ranked = hits.where_(&rank, 0i64)?;
        let last = ranked.reduce_to(ReduceOp::Max, &[d], true)?;
        let winner = hits.logical_and(&ranked.eq(&last)?)?;
        let dtype = self.graph()?.dtype;
        let zero = Tensor::constant(ConstValue::zero(dtype), dtype, &[]);
        let vals = winner.where_(&src.unsqueeze_at(d + 1)?, &zero)?;
        let how = if dtype.is_bool() {
            ReduceOp::Max
        } else {
            ReduceOp::Add
        };
        let written = self.scatter_collect(op, d, &vals, how)?;
        let any = self.scatter_collect(op, d, &hits, ReduceOp::Max)?;
        any.where_(&written, self)
    }

    /// PyTorch's `scatter_add(dim, index, src)`: `self` plus the sum of
    /// the `src` entries written to each position.
    #[track_caller]
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_reduce_as("scatter_add", dim, index, src, ScatterReduce::Sum, true)
    }

    /// PyTorch's `scatter_reduce(dim, index, src, reduce, include_self)`:
    /// each position written by `index` becomes the reduction of the
    /// values written to it, and of its own value if `include_self`;
    /// positions nobody writes keep their value.
    #[track_caller]
    pub fn scatter_reduce(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<Tensor> {
        self.scatter_reduce_as("scatter_reduce", dim, index, src, reduce, include_self)
    }

    #[track_caller]
    fn scatter_reduce_as(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<Tensor> {
        let (d, src) = self.scatter_args(op, dim, index, src)?;
        let dtype = self.graph()?.dtype;
        if dtype.is_bool() && reduce != ScatterReduce::Amax && reduce != ScatterReduce::Amin {
            return Err(Error::dtype(
                op,
                format!("{reduce:?} is not defined for bool tensors"),
            ));
        }
        let hits = self.scatter_hits(op, d, index)?;
        let src = src.unsqueeze_at(d + 1)?;
        let how = match reduce {
            ScatterReduce::Sum | ScatterReduce::Mean => ReduceOp::Add,
            ScatterReduce::Prod => ReduceOp::Mul,
            ScatterReduce::Amax => ReduceOp::Max,
            ScatterReduce::Amin => ReduceOp::Min,
        };
        let neutral = Tensor::constant(how.identity(dtype), dtype, &[]);
        let vals = hits.where_(&src, &neutral)?;
        // Positions nobody writes are masked out below: the padding's
        // value does not matter.
        let combined = self.scatter_collect(op, d, &vals, how)?;
        let any = self.scatter_collect(op, d, &hits, ReduceOp::Max)?;
        let with_self = if include_self {
            Tensor::alu(how.alu(), &[&combined, self])?
        } else {
            combined
        };
        let result = if reduce == ScatterReduce::Mean {
            let count = self
                .scatter_collect(op, d, &hits.cast_to(ScalarType::I64)?, ReduceOp::Add)?
                .add(i64::from(include_self))?
                .maximum(1i64)?
                .cast_to(dtype)?;
            if dtype.is_float() {
                with_self.div(&count)?
            } else {
                with_self.floor_div(&count)?
            }
        } else {
            with_self
        };
        any.where_(&result, self)
    }

    /// `self`'s shape and its broadcast with the bool `mask`'s (errors
    /// name `op`).
    #[track_caller]
    fn mask_shapes(&self, op: &str, mask: &Tensor) -> Result<(Vec<usize>, Vec<usize>)> {
        let shape = self.graph()?.shape.to_vec();
        expect_dtype(op, "mask", mask, ScalarType::is_bool, "bool")?;
        let joint = morok_core::shape::broadcast_shapes(op, &shape, mask.shape()).located()?;
        Ok((shape, joint.to_vec()))
    }

    /// PyTorch's `masked_fill(mask, value)`: `value` where the bool `mask`
    /// (broadcast to `self`'s shape) is true.
    #[track_caller]
    pub fn masked_fill(&self, mask: &Tensor, value: impl super::IntoOperand) -> Result<Tensor> {
        let op = "masked_fill";
        let (shape, joint) = self.mask_shapes(op, mask)?;
        if joint != shape {
            return Err(shape_error(
                op,
                &[&shape, mask.shape()],
                "the mask must broadcast to the input's shape",
            ));
        }
        let dtype = self.graph()?.dtype;
        mask.where_(value, self)?.cast_to(dtype)
    }

    /// PyTorch's `masked_select(mask)`: the 1-D tensor of the elements
    /// where the bool `mask` (broadcast with `self`) is true, in row-major
    /// order. The output's length depends on the data: the mask's count
    /// is realized (one kernel runs) when this is called; the values stay
    /// lazy.
    #[track_caller]
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        let op = "masked_select";
        let (_, joint) = self.mask_shapes(op, mask)?;
        let n = super::checked_numel(op, &joint)?;
        let x = self.expand_to(&joint)?.reshape_to(&[n])?;
        let mask = mask.expand_to(&joint)?.reshape_to(&[n])?;
        x.compact(op, &mask)
    }

    /// PyTorch's `nonzero()`: the `[count, ndim]` `i64` coordinates of the
    /// non-zero elements, in row-major order. Like
    /// [`Tensor::masked_select`], the count is realized when this is
    /// called.
    #[track_caller]
    pub fn nonzero(&self) -> Result<Tensor> {
        let op = "nonzero";
        let shape = self.graph()?.shape.clone();
        let n = self.numel();
        let mask = self.ne(0)?.reshape_to(&[n])?;
        let r = shape.len();
        let mut coords = Vec::with_capacity(r);
        for (a, &len) in shape.iter().enumerate() {
            let mut at = vec![1; r];
            at[a] = len;
            let c = Tensor::counting(op, len, ScalarType::I64)?
                .reshape_to(&at)?
                .expand_to(&shape)?
                .reshape_to(&[n, 1])?;
            coords.push(c);
        }
        let table = if coords.is_empty() {
            Tensor::constant(ConstValue::Int(0), ScalarType::I64, &[n, 0])
        } else {
            let refs: Vec<&Tensor> = coords.iter().collect();
            Tensor::cat_as(op, &refs, 1)?
        };
        table.compact(op, &mask)
    }

    /// The rows of `self` (`[n, ...]`) where the bool `mask` (`[n]`) is
    /// true: the mask's count is realized, the rest stays lazy. Row `i`
    /// goes to position `cumsum(mask)[i] - 1`.
    #[track_caller]
    fn compact(&self, op: &str, mask: &Tensor) -> Result<Tensor> {
        let counted = mask.cast_to(ScalarType::I64)?;
        let total = counted.reduce_to(ReduceOp::Add, &[0], false)?;
        let count = match total.to_vec::<i64>()?.first() {
            Some(&c) => c as usize,
            None => 0,
        };
        let n = self.shape()[0];
        let mut hit_shape = self.shape().to_vec();
        hit_shape.insert(0, count);
        super::checked_numel(op, &hit_shape)?;
        let slot = counted.cumsum_axis(op, 0)?.sub(1i64)?;
        let slot = mask.where_(&slot, -1i64)?;
        // Output j takes row i where slot[i] == j: select along the rows
        // with an index of shape [count, 1, ...] over positions i.
        let mut out_shape = self.shape().to_vec();
        out_shape[0] = count;
        let j = Tensor::counting(op, count, ScalarType::I64)?.reshape_to(&[count, 1])?;
        let hit = slot.reshape_to(&[1, n])?.eq(&j)?; // [count, n]
        let mut hit_shape = vec![count, n];
        hit_shape.extend(std::iter::repeat_n(1, self.ndim() - 1));
        let hit = hit.reshape_to(&hit_shape)?;
        let dtype = self.graph()?.dtype;
        let zero = Tensor::constant(ConstValue::zero(dtype), dtype, &[]);
        let picked = hit.where_(&self.unsqueeze_at(0)?, &zero)?;
        let how = if dtype.is_bool() {
            ReduceOp::Max
        } else {
            ReduceOp::Add
        };
        picked.reduce_to(how, &[1], false)
    }

    /// PyTorch's `one_hot(self, num_classes)`: `i64` rows with a 1 at each
    /// integer position (a row of zeros for a position out of range).
    #[track_caller]
    pub fn one_hot(&self, num_classes: usize) -> Result<Tensor> {
        let op = "one_hot";
        integer_index(op, self)?;
        let mut out = self.shape().to_vec();
        out.push(num_classes);
        super::checked_numel(op, &out)?;
        let mut at = vec![1; self.ndim() + 1];
        at[self.ndim()] = num_classes;
        let classes = Tensor::counting(op, num_classes, ScalarType::I64)?.reshape_to(&at)?;
        self.cast_to(ScalarType::I64)?
            .unsqueeze_at(self.ndim())?
            .eq(&classes)?
            .cast_to(ScalarType::I64)
    }

    /// Keeps `self` where `col - row` (of the last two axes) is at least
    /// (`upper`) or at most `diagonal`, zero elsewhere. Errors name `op`.
    #[track_caller]
    fn triangle(&self, op: &str, diagonal: isize, upper: bool) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        if shape.len() < 2 {
            return Err(shape_error(op, &[&shape], "needs at least 2 axes"));
        }
        let (rows, cols) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let r = Tensor::counting(op, rows, ScalarType::I64)?.reshape_to(&[rows, 1])?;
        let c = Tensor::counting(op, cols, ScalarType::I64)?.reshape_to(&[1, cols])?;
        let offset = c.sub(&r)?;
        let keep = if upper {
            offset.ge(diagonal as i64)?
        } else {
            offset.le(diagonal as i64)?
        };
        let dtype = self.graph()?.dtype;
        let zero = Tensor::constant(ConstValue::zero(dtype), dtype, &[]);
        keep.where_(self, &zero)
    }

    /// PyTorch's `tril(diagonal)`: the lower triangle of the last two
    /// axes (elements with `col - row <= diagonal`), zero above.
    #[track_caller]
    pub fn tril(&self, diagonal: isize) -> Result<Tensor> {
        self.triangle("tril", diagonal, false)
    }

    /// PyTorch's `triu(diagonal)`: the upper triangle of the last two
    /// axes (elements with `col - row >= diagonal`), zero below.
    #[track_caller]
    pub fn triu(&self, diagonal: isize) -> Result<Tensor> {
        self.triangle("triu", diagonal, true)
    }

    /// PyTorch's `diagonal(offset, dim1, dim2)`: axes `dim1` and `dim2`
    /// are removed and their diagonal (above the main one for a positive
    /// `offset`) becomes the last axis. A view (movement ops only).
    #[track_caller]
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        let op = "diagonal";
        let shape = self.graph()?.shape.clone();
        if shape.len() < 2 {
            return Err(shape_error(op, &[&shape], "needs at least 2 axes"));
        }
        let (a, b) = (dim_index(op, &shape, dim1)?, dim_index(op, &shape, dim2)?);
        if a == b {
            return Err(shape_error(
                op,
                &[&shape],
                format!("dim1 and dim2 are both axis {a}"),
            ));
        }
        let mut perm: Vec<usize> = (0..shape.len()).filter(|&i| i != a && i != b).collect();
        perm.extend([a, b]);
        let x = self.permute_to(&perm)?;
        let r = x.ndim();
        let (rows, cols) = (x.shape()[r - 2], x.shape()[r - 1]);
        let mut bounds: Vec<(usize, usize)> = x.shape().iter().map(|&d| (0, d)).collect();
        let skip = offset.unsigned_abs();
        if offset >= 0 {
            bounds[r - 1] = (skip.min(cols), cols);
        } else {
            bounds[r - 2] = (skip.min(rows), rows);
        }
        let x = x.shrink_to(&bounds)?;
        let len = x.shape()[r - 2].min(x.shape()[r - 1]);
        let mut square: Vec<(usize, usize)> = x.shape().iter().map(|&d| (0, d)).collect();
        square[r - 2] = (0, len);
        square[r - 1] = (0, len);
        let lead = x.shape()[..r - 2].to_vec();
        let with = |tail: &[usize]| {
            let mut s = lead.clone();
            s.extend_from_slice(tail);
            s
        };
        let x = x.shrink_to(&square)?.reshape_to(&with(&[len * len]))?;
        // Row i of a [len, len + 1] view of the padded square starts at
        // element i·(len + 1): its first element is the diagonal's i-th.
        let mut pads = vec![(0, 0); lead.len() + 1];
        pads[lead.len()] = (0, len);
        let x = x.pad_to(op, &pads)?.reshape_to(&with(&[len, len + 1]))?;
        let mut first: Vec<(usize, usize)> = x.shape().iter().map(|&d| (0, d)).collect();
        first[lead.len() + 1] = (0, 1);
        x.shrink_to(&first)?.reshape_to(&with(&[len]))
    }

    /// PyTorch's `diag(diagonal)`: a 1-D tensor becomes the square matrix
    /// with it on diagonal `diagonal`; a 2-D tensor gives that diagonal.
    #[track_caller]
    pub fn diag(&self, diagonal: isize) -> Result<Tensor> {
        let op = "diag";
        let shape = self.graph()?.shape.clone();
        match shape.len() {
            2 => self.diagonal(diagonal, 0, 1),
            1 => {
                let n = shape[0];
                super::checked_numel(op, &[n, n + 1])?;
                let x = self
                    .reshape_to(&[n, 1])?
                    .pad_to(op, &[(0, 0), (0, n)])?
                    .reshape_to(&[n * (n + 1)])?
                    .shrink_to(&[(0, n * n)])?
                    .reshape_to(&[n, n])?;
                let k = diagonal.unsigned_abs();
                let pads = if diagonal >= 0 {
                    [(0, k), (k, 0)]
                } else {
                    [(k, 0), (0, k)]
                };
                x.pad_to(op, &pads)
            }
            _ => Err(shape_error(op, &[&shape], "needs a 1-D or 2-D tensor")),
        }
    }

    /// PyTorch's `roll(shifts, dims)`: elements shifted `shifts[i]` places
    /// along `dims[i]`, wrapping around; with no `dims` the flattened
    /// tensor is rolled and the shape restored.
    #[track_caller]
    pub fn roll(&self, shifts: &[isize], dims: &[isize]) -> Result<Tensor> {
        let op = "roll";
        let shape = self.graph()?.shape.clone();
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(shape_error(
                    op,
                    &[&shape],
                    format!("{} shifts without dims", shifts.len()),
                ));
            }
            let n = self.numel();
            return self
                .reshape_to(&[n])?
                .roll(shifts, &[0])?
                .reshape_to(&shape);
        }
        if shifts.len() != dims.len() {
            return Err(shape_error(
                op,
                &[&shape],
                format!("{} shifts for {} dims", shifts.len(), dims.len()),
            ));
        }
        let mut x = self.clone();
        for (&s, &dim) in shifts.iter().zip(dims) {
            let d = dim_index(op, &shape, dim)?;
            let Some(&n) = shape.get(d) else {
                continue;
            };
            if n == 0 {
                continue;
            }
            let s = s.rem_euclid(n as isize) as usize;
            if s == 0 {
                continue;
            }
            let mut reps = vec![1; shape.len()];
            reps[d] = 2;
            let mut b: Vec<(usize, usize)> = shape.iter().map(|&k| (0, k)).collect();
            b[d] = (n - s, 2 * n - s);
            x = x.repeat_as(op, &reps)?.shrink_to(&b)?;
        }
        Ok(x)
    }

    /// PyTorch's `meshgrid(tensors, indexing)`: for 1-D (or 0-d) inputs of
    /// lengths `n_1, ..., n_k`, `k` tensors of shape `[n_1, ..., n_k]`
    /// (`Ij`; `Xy` swaps the first two axes), the `i`-th varying along
    /// axis `i`.
    #[track_caller]
    pub fn meshgrid(tensors: &[&Tensor], indexing: MeshIndexing) -> Result<Vec<Tensor>> {
        let op = "meshgrid";
        let mut lens = Vec::with_capacity(tensors.len());
        for t in tensors {
            let s = t.graph()?.shape.clone();
            if s.len() > 1 {
                return Err(shape_error(op, &[&s], "needs 0-d or 1-D tensors"));
            }
            lens.push(t.numel());
        }
        let swap = indexing == MeshIndexing::Xy && lens.len() >= 2;
        let mut out_shape = lens.clone();
        if swap {
            out_shape.swap(0, 1);
        }
        super::checked_numel(op, &out_shape)?;
        let mut out = Vec::with_capacity(tensors.len());
        for (i, t) in tensors.iter().enumerate() {
            let pos = match (swap, i) {
                (true, 0) => 1,
                (true, 1) => 0,
                _ => i,
            };
            let mut at = vec![1; lens.len()];
            at[pos] = lens[i];
            out.push(t.reshape_to(&at)?.expand_to(&out_shape)?);
        }
        Ok(out)
    }

    /// The tensor `repeat_interleave` works on (flattened for `dim =
    /// None`, at least 1-D) and its normalized axis.
    #[track_caller]
    fn interleave_axis(&self, op: &str, dim: Option<isize>) -> Result<(Tensor, usize)> {
        let (x, dim) = match dim {
            Some(d) => (self.clone(), d),
            None => (self.reshape_to(&[self.numel()])?, 0),
        };
        let x = if x.ndim() == 0 {
            x.reshape_to(&[1])?
        } else {
            x
        };
        let d = dim_index(op, x.shape(), dim)?;
        Ok((x, d))
    }

    /// PyTorch's `repeat_interleave(repeats, dim)`: each element repeated
    /// `repeats` times in place along `dim` (`None`: the flattened tensor).
    #[track_caller]
    pub fn repeat_interleave(&self, repeats: usize, dim: Option<isize>) -> Result<Tensor> {
        let op = "repeat_interleave";
        let (x, d) = self.interleave_axis(op, dim)?;
        let mut grown = x.shape().to_vec();
        grown.insert(d + 1, repeats);
        super::checked_numel(op, &grown)?;
        let mut out = x.shape().to_vec();
        out[d] *= repeats;
        x.unsqueeze_at(d + 1)?.expand_to(&grown)?.reshape_to(&out)
    }

    /// PyTorch's `repeat_interleave(repeats, dim)` with a tensor of
    /// counts: element `j` along `dim` (`None`: the flattened tensor) is
    /// repeated `repeats[j]` times. `repeats` is a 0-d or 1-D integer
    /// tensor with one count per element, or a single count for all. The
    /// output's length depends on the data: the counts are realized (one
    /// kernel runs) when this is called, as with [`Tensor::nonzero`]; the
    /// values stay lazy. A negative count is an error.
    #[track_caller]
    pub fn repeat_interleave_counts(&self, repeats: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        let op = "repeat_interleave";
        integer_index(op, repeats)?;
        let (x, d) = self.interleave_axis(op, dim)?;
        let n = x.shape()[d];
        let rs = repeats.shape().to_vec();
        let single = rs.iter().product::<usize>() == 1 && rs.len() <= 1;
        if rs.len() > 1 || !(single || rs == [n]) {
            return Err(shape_error(
                op,
                &[x.shape(), &rs],
                format!("repeats must hold one count or one per element of axis {d} ({n})"),
            ));
        }
        let counts = repeats.cast_to(ScalarType::I64)?.to_vec::<i64>()?;
        if let Some(c) = counts.iter().find(|&&c| c < 0) {
            return Err(shape_error(
                op,
                &[x.shape(), &rs],
                format!("repeats holds the negative count {c}"),
            ));
        }
        let count_of = |j: usize| counts[if single { 0 } else { j }] as usize;
        let total = (0..n).try_fold(0usize, |acc, j| acc.checked_add(count_of(j)));
        let mut out = x.shape().to_vec();
        out[d] = total.unwrap_or(usize::MAX);
        if super::checked_numel(op, &out)? == 0 {
            let dtype = x.graph()?.dtype;
            return Ok(Tensor::constant(ConstValue::zero(dtype), dtype, &out));
        }
        let positions: Vec<i64> = (0..n)
            .flat_map(|j| std::iter::repeat_n(j as i64, count_of(j)))
            .collect();
        let k = positions.len();
        x.index_select(d as isize, &Tensor::from_vec(positions, &[k])?)
    }

    /// PyTorch's `Tensor.unfold(dimension, size, step)`: the windows of
    /// `size` elements, `step` apart, along `dimension`; that axis becomes
    /// the window count and a new last axis of length `size` is added.
    #[track_caller]
    pub fn unfold(&self, dimension: isize, size: usize, step: usize) -> Result<Tensor> {
        let op = "unfold";
        let shape = self.graph()?.shape.clone();
        let x = if shape.is_empty() {
            self.reshape_to(&[1])?
        } else {
            self.clone()
        };
        let d = dim_index(op, x.shape(), dimension)?;
        let n = x.shape()[d];
        if step == 0 || size > n {
            return Err(shape_error(
                op,
                &[&shape],
                format!("window {size} with step {step} does not fit axis {d} of size {n}"),
            ));
        }
        let last = x.ndim() - 1;
        if size == 0 {
            let mut out = x.shape().to_vec();
            out[d] = n / step + 1;
            out.push(0);
            let dtype = x.graph()?.dtype;
            return Ok(Tensor::constant(ConstValue::zero(dtype), dtype, &out));
        }
        let windows = x.swap_axes(d, last)?.pool(op, &[size], &[step], &[1])?;
        // [..., o, k] with the window axis where `d`'s moved: swap back.
        windows.swap_axes(d, last)
    }
}
