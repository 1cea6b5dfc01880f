//! `sort`, `argsort` and `topk` by ranking: the stable position of
//! element `i` along the axis is the number of elements ordered before it
//! (`x[j] < x[i]`, or equal with `j < i`); position `p` of the result
//! takes the element ranked `p` (a one-hot sum, as in `indexing`). NaN
//! sorts as the largest value, as in PyTorch. The cost is quadratic in
//! the axis length.

use super::movement::dim_index;
use super::Tensor;
use crate::error::{Error, Result};
use morok_core::uop::ReduceOp;
use morok_core::{ConstValue, ScalarType};

impl Tensor {
    /// `a` before `b` in ascending order with NaN last (bool tensors).
    #[track_caller]
    fn ordered_before(a: &Tensor, b: &Tensor, float: bool) -> Result<Tensor> {
        let lt = a.lt(b)?;
        if !float {
            return Ok(lt);
        }
        lt.logical_or(&a.isnan()?.logical_not()?.logical_and(&b.isnan()?)?)
    }

    /// PyTorch's `sort(dim, descending, stable=True)`: the sorted values
    /// and the `i64` indices they came from; equal elements keep their
    /// order.
    #[track_caller]
    pub fn sort(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        self.sort_as("sort", dim, descending)
    }

    /// The indices of [`Tensor::sort`].
    #[track_caller]
    pub fn argsort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        Ok(self.sort_as("argsort", dim, descending)?.1)
    }

    /// PyTorch's `topk(k, dim, largest, sorted=True)`: the `k` largest
    /// (or smallest) elements along `dim` in order, and their indices.
    #[track_caller]
    pub fn topk(&self, k: usize, dim: isize, largest: bool) -> Result<(Tensor, Tensor)> {
        let op = "topk";
        let shape = self.graph()?.shape.clone();
        let d = dim_index(op, &shape, dim)?;
        let n = shape.get(d).copied().unwrap_or(1);
        if k > n {
            return Err(Error::argument(
                op,
                format!("k = {k} is more than the {n} elements of axis {dim} of {shape:?}"),
            ));
        }
        let (v, i) = self.sort_as(op, dim, largest)?;
        if shape.is_empty() {
            return Ok((v, i));
        }
        let mut b: Vec<(usize, usize)> = shape.iter().map(|&s| (0, s)).collect();
        b[d] = (0, k);
        Ok((v.shrink_to(&b)?, i.shrink_to(&b)?))
    }

    #[track_caller]
    fn sort_as(&self, op: &str, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        let shape = self.graph()?.shape.clone();
        let d = dim_index(op, &shape, dim)?;
        if shape.is_empty() {
            let zero = Tensor::constant(ConstValue::Int(0), ScalarType::I64, &[]);
            return Ok((self.clone(), zero));
        }
        let n = shape[d];
        super::checked_numel(op, &[shape.iter().product::<usize>(), n])?;
        let dtype = self.graph()?.dtype;
        let float = dtype.is_float();
        // xi: [.., n(i), 1, ..]; xj: [.., 1, n(j), ..].
        let xi = self.unsqueeze_at(d + 1)?;
        let xj = self.unsqueeze_at(d)?;
        let before = if descending {
            Tensor::ordered_before(&xi, &xj, float)?
        } else {
            Tensor::ordered_before(&xj, &xi, float)?
        };
        let equal = if float {
            xj.eq(&xi)?
                .logical_or(&xj.isnan()?.logical_and(&xi.isnan()?)?)?
        } else {
            xj.eq(&xi)?
        };
        let count = Tensor::counting(op, n, ScalarType::I64)?;
        let mut at_i = vec![1; shape.len() + 1];
        at_i[d] = n;
        let mut at_j = vec![1; shape.len() + 1];
        at_j[d + 1] = n;
        let earlier = count.reshape_to(&at_j)?.lt(&count.reshape_to(&at_i)?)?;
        let ahead = before.logical_or(&equal.logical_and(&earlier)?)?;
        // rank[i]: [.., n(i), ..]
        let rank = ahead
            .cast_to(ScalarType::I64)?
            .reduce_to(ReduceOp::Add, &[d + 1], false)?;
        // Result position p takes element i with rank[i] == p:
        // hit [.., n(p), n(i), ..].
        let hit = rank.unsqueeze_at(d)?.eq(&count.reshape_to(&at_i)?)?;
        let zero = Tensor::constant(ConstValue::zero(dtype), dtype, &[]);
        let how = if dtype.is_bool() {
            ReduceOp::Max
        } else {
            ReduceOp::Add
        };
        let values = hit
            .where_(&self.unsqueeze_at(d)?, &zero)?
            .reduce_to(how, &[d + 1], false)?;
        let indices = hit.where_(&count.reshape_to(&at_j)?, 0i64)?.reduce_to(
            ReduceOp::Add,
            &[d + 1],
            false,
        )?;
        Ok((values, indices))
    }
}
