//! Writes and masks: PyTorch's `scatter`, `scatter_add`,
//! `scatter_reduce`, `masked_fill`, `masked_select`, `nonzero` and
//! `one_hot`, built from one-hot comparisons like the reads of
//! `indexing.rs`; positions out of range write nothing (see that module's
//! docs).

use super::indexing::{expect_dtype, integer_index};
use super::operand::const_value;
use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::dtype::Element;
use morok_core::shape::{masked_shape, scatter_shape};
use morok_core::tensor_ops::ScatterReduce;
use morok_core::uop::ReduceOp;
use morok_core::{ConstValue, ScalarType};

impl Tensor {
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
        scatter_shape(op, &shape, &ishape, &sshape, dim).located()?;
        let dtype = self.graph()?.dtype;
        let src_dtype = src.graph()?.dtype;
        if src_dtype != dtype {
            // As PyTorch: no silent cast of the values written.
            return Err(Error::dtype(
                op,
                format!(
                    "src holds {src_dtype} but the input holds {dtype}: cast src to {dtype} first"
                ),
            ));
        }
        let cut: Vec<(usize, usize)> = ishape.iter().map(|&k| (0, k)).collect();
        Ok((d, src.shrink_to(&cut)?))
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
        self.scatter_as("scatter", dim, index, src)
    }

    /// [`Tensor::scatter`] with errors naming `op`.
    #[track_caller]
    fn scatter_as(&self, op: &str, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
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

    /// PyTorch's `scatter(dim, index, value)`: [`Tensor::scatter`] of a
    /// scalar, `value` (in `self`'s element type) written wherever `index`
    /// points.
    #[track_caller]
    pub fn scatter_value<T: Element>(
        &self,
        dim: isize,
        index: &Tensor,
        value: T,
    ) -> Result<Tensor> {
        let dtype = self.graph()?.dtype;
        let src = Tensor::constant(const_value(value), dtype, &index.graph()?.shape);
        self.scatter_as("scatter_value", dim, index, &src)
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
            // The words of the op table's `NotBool` rule (scatter_add's).
            let which = if op == "scatter_reduce" {
                format!(" (reduce {reduce:?})")
            } else {
                String::new()
            };
            return Err(Error::dtype(
                op,
                format!("not defined for bool tensors{which}"),
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
    /// (broadcast to `self`'s shape) is true; a tensor `value` must broadcast to
    /// it too.
    #[track_caller]
    pub fn masked_fill(&self, mask: &Tensor, value: impl super::IntoOperand) -> Result<Tensor> {
        let op = "masked_fill";
        let (shape, _) = self.mask_shapes(op, mask)?;
        let value = value.into_operand();
        let value_shape = match &value.kind {
            super::operand::Kind::Tensor(t) => Some(t.graph()?.shape.clone()),
            super::operand::Kind::Scalar { .. } => None,
        };
        masked_shape(op, &shape, mask.shape(), value_shape.as_deref()).located()?;
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
}
