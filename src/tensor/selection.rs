//! Index-free selections: PyTorch's `tril`, `triu`, `diag`, `diagonal`,
//! `roll`, `meshgrid`, `repeat_interleave` (also with a tensor of counts)
//! and `unfold`, as movement ops and comparisons of index ranges.

use super::indexing::{integer_index, shape_error};
use super::movement::dim_index;
use super::Tensor;
use crate::error::{Located, Result};
use morok_core::shape::{
    diag_shape, diagonal_shape, normalize_axis, repeat_interleave_shape, roll_shape, unfold_shape,
};
use morok_core::{ConstValue, ScalarType};

/// The order of [`Tensor::meshgrid`]'s outputs' axes (PyTorch's
/// `indexing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshIndexing {
    /// `"ij"`: output axis `i` follows input `i`.
    Ij,
    /// `"xy"`: the first two axes are swapped (Cartesian).
    Xy,
}

impl Tensor {
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
        let shape = self.graph()?.shape.clone();
        diagonal_shape(&shape, offset, dim1, dim2).located()?;
        let (a, b) = (
            normalize_axis("diagonal", &shape, dim1).located()?,
            normalize_axis("diagonal", &shape, dim2).located()?,
        );
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
        let x = x
            .pad_to("diagonal", &pads)?
            .reshape_to(&with(&[len, len + 1]))?;
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
        diag_shape(&shape, diagonal).located()?;
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
        roll_shape(&shape, shifts, dims).located()?;
        if dims.is_empty() {
            let n = self.numel();
            return self
                .reshape_to(&[n])?
                .roll(shifts, &[0])?
                .reshape_to(&shape);
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
        repeat_interleave_shape(&self.graph()?.shape, repeats, dim).located()?;
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
        unfold_shape(&shape, dimension, size, step).located()?;
        let d = dim_index(op, x.shape(), dimension)?;
        let n = x.shape()[d];
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
