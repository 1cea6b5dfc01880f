//! Reductions: REDUCE_AXIS keeps reduced axes with size 1, and a RESHAPE
//! drops them unless `keepdim` is set.
//!
//! Composite reductions: `mean` = sum / count; `var` = sum of squared
//! deviations / (count - correction); `argmax` marks the maxima, weights
//! them with a descending count `n, n-1, ..., 1` and takes the max, so the
//! first occurrence wins; `logsumexp` subtracts the (finite) max before
//! exponentiating; `cumsum` sums sliding windows of the zero-padded axis.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{reduce_axes, reduce_shape};
use morok_core::uop::{Arg, Op, ReduceOp};
use morok_core::{ConstValue, ScalarType};

/// The dtype a `sum` of `t` returns (half floats come back as themselves).
fn sum_result(t: ScalarType) -> ScalarType {
    if t.is_float() {
        t
    } else {
        t.sum_accumulator()
    }
}

impl Tensor {
    /// Normalized, sorted, distinct reduction axes (`None`: all axes).
    #[track_caller]
    pub(super) fn reduce_axes(&self, op: &str, axes: Option<&[isize]>) -> Result<Vec<usize>> {
        reduce_axes(op, &self.graph()?.shape, axes).located()
    }

    /// REDUCE_AXIS over normalized `axes`, dropping them unless `keepdim`.
    #[track_caller]
    pub(super) fn reduce_to(&self, op: ReduceOp, axes: &[usize], keepdim: bool) -> Result<Tensor> {
        let g = self.graph()?;
        if axes.is_empty() {
            return Ok(self.clone());
        }
        let kept = reduce_shape(&g.shape, axes, true);
        let uop = morok_core::UOp::new(
            Op::ReduceAxis,
            g.uop.dtype(),
            smallvec::smallvec![g.uop.clone()],
            Arg::ReduceAxis(op, axes.into()),
        );
        let reduced = self.derive(uop, kept)?;
        if keepdim {
            Ok(reduced)
        } else {
            reduced.reshape_to(&reduce_shape(&g.shape, axes, false))
        }
    }

    /// Number of elements in the reduced `axes`.
    fn reduced_count(&self, axes: &[usize]) -> usize {
        axes.iter().map(|&a| self.shape()[a]).product()
    }

    /// Sum or product in the accumulator dtype, cast to the result dtype.
    #[track_caller]
    fn accumulate(
        &self,
        op: ReduceOp,
        name: &str,
        axes: Option<&[isize]>,
        keepdim: bool,
    ) -> Result<Tensor> {
        let axes = self.reduce_axes(name, axes)?;
        let dtype = self.graph()?.dtype;
        let acc = self.cast_to(dtype.sum_accumulator())?;
        acc.reduce_to(op, &axes, keepdim)?
            .cast_to(sum_result(dtype))
    }

    /// Sum over `axes` (`None`: all). Small integers and bools sum as
    /// 32-bit integers; half floats accumulate in `f32`.
    #[track_caller]
    pub fn sum(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        self.accumulate(ReduceOp::Add, "sum", axes, keepdim)
    }

    /// Product over `axes`, with the dtype rules of [`Tensor::sum`].
    #[track_caller]
    pub fn prod(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        self.accumulate(ReduceOp::Mul, "prod", axes, keepdim)
    }

    /// Maximum over `axes` (NaN wins).
    #[track_caller]
    pub fn max(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let axes = self.reduce_axes("max", axes)?;
        self.reduce_to(ReduceOp::Max, &axes, keepdim)
    }

    /// Minimum over `axes` (NaN wins).
    #[track_caller]
    pub fn min(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let axes = self.reduce_axes("min", axes)?;
        self.reduce_to(ReduceOp::Min, &axes, keepdim)
    }

    /// Arithmetic mean over `axes` (integers are averaged as `f32`).
    #[track_caller]
    pub fn mean(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let norm = self.reduce_axes("mean", axes)?;
        let x = self.to_float()?;
        let dtype = x.graph()?.dtype;
        let total = x
            .cast_to(dtype.sum_accumulator())?
            .reduce_to(ReduceOp::Add, &norm, keepdim)?;
        let count = total.filled(self.reduced_count(&norm) as f64)?;
        Tensor::alu(Op::Fdiv, &[&total, &count])?.cast_to(dtype)
    }

    /// Variance over `axes`: the sum of squared deviations divided by
    /// `count - correction` (1: unbiased, 0: population).
    #[track_caller]
    pub fn var(&self, axes: Option<&[isize]>, correction: usize, keepdim: bool) -> Result<Tensor> {
        self.variance("var", axes, correction, keepdim)
    }

    /// [`Tensor::var`] with errors naming `op`.
    #[track_caller]
    fn variance(
        &self,
        op: &str,
        axes: Option<&[isize]>,
        correction: usize,
        keepdim: bool,
    ) -> Result<Tensor> {
        let norm = self.reduce_axes(op, axes)?;
        let x = self.to_float()?;
        let dtype = x.graph()?.dtype;
        let x = x.cast_to(dtype.sum_accumulator())?;
        let signed: Vec<isize> = norm.iter().map(|&a| a as isize).collect();
        let mu = x.mean(Some(&signed), true)?;
        let d = x.sub(&mu)?;
        let ss = Tensor::alu(Op::Mul, &[&d, &d])?.reduce_to(ReduceOp::Add, &norm, keepdim)?;
        let n = self.reduced_count(&norm).saturating_sub(correction);
        let divisor = ss.filled(n as f64)?;
        Tensor::alu(Op::Fdiv, &[&ss, &divisor])?.cast_to(dtype)
    }

    /// Standard deviation: the square root of [`Tensor::var`].
    #[track_caller]
    pub fn std(&self, axes: Option<&[isize]>, correction: usize, keepdim: bool) -> Result<Tensor> {
        self.variance("std", axes, correction, keepdim)?.sqrt()
    }

    /// The variance and the mean over `axes` in one call (PyTorch's
    /// `var_mean`): `(var(axes, correction, keepdim), mean(axes, keepdim))`.
    #[track_caller]
    pub fn var_mean(
        &self,
        axes: Option<&[isize]>,
        correction: usize,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        let var = self.variance("var_mean", axes, correction, keepdim)?;
        Ok((var, self.mean(axes, keepdim)?))
    }

    /// The standard deviation and the mean over `axes` in one call
    /// (PyTorch's `std_mean`).
    #[track_caller]
    pub fn std_mean(
        &self,
        axes: Option<&[isize]>,
        correction: usize,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        let std = self
            .variance("std_mean", axes, correction, keepdim)?
            .sqrt()?;
        Ok((std, self.mean(axes, keepdim)?))
    }

    /// Index (`i64`) of the first maximum along `axis`; `None` searches
    /// the flattened tensor. NaN counts as the maximum.
    #[track_caller]
    pub fn argmax(&self, axis: Option<isize>) -> Result<Tensor> {
        self.arg_extreme("argmax", axis, false)
    }

    /// Index (`i64`) of the first minimum along `axis`; `None` searches
    /// the flattened tensor. NaN counts as the minimum.
    #[track_caller]
    pub fn argmin(&self, axis: Option<isize>) -> Result<Tensor> {
        self.arg_extreme("argmin", axis, true)
    }

    #[track_caller]
    fn arg_extreme(&self, name: &str, axis: Option<isize>, min: bool) -> Result<Tensor> {
        let (x, axis) = match axis {
            Some(a) => (self.clone(), a),
            None => (self.reshape_to(&[self.numel()])?, 0),
        };
        let ax = x.axis(name, axis)?;
        if x.ndim() == 0 {
            return Ok(Tensor::constant(ConstValue::Int(0), ScalarType::I64, &[]));
        }
        let n = x.shape()[ax];
        if n == 0 {
            return Err(Error::argument(name, format!("axis {axis} is empty")));
        }
        let dtype = x.graph()?.dtype;
        // Order-reversing map for argmin: -x for floats, !x for integers
        // and bools (no overflow at the type's minimum).
        let x = match (min, dtype.is_float()) {
            (false, _) => x,
            (true, true) => Tensor::alu(Op::Neg, &[&x])?,
            (true, false) => Tensor::alu(Op::Not, &[&x])?,
        };
        let peak = x.reduce_to(ReduceOp::Max, &[ax], true)?;
        let mut hit = x.eq(&peak)?;
        if dtype.is_float() {
            hit = hit.logical_or(&x.isnan()?)?;
        }
        let mut weight_shape = vec![1; x.ndim() - ax];
        weight_shape[0] = n;
        // The positions are computed in i32 where they fit (cheaper
        // reductions), and returned as i64.
        let position = if i32::try_from(n).is_ok() {
            ScalarType::I32
        } else {
            ScalarType::I64
        };
        // The weights n, n-1, ..., 1 along the axis.
        let count = Tensor::counting(name, n, position)?;
        let top = count.filled(n as f64)?;
        let weights = Tensor::alu(Op::Sub, &[&top, &count])?.reshape_to(&weight_shape)?;
        let zero = Tensor::constant(ConstValue::Int(0), position, &[]);
        let picked = hit.where_(&weights, &zero)?;
        let best = picked.reduce_to(ReduceOp::Max, &[ax], false)?;
        let count = best.filled(n as f64)?;
        Tensor::alu(Op::Sub, &[&count, &best])?.cast_to(ScalarType::I64)
    }

    /// True where any element over `axes` is non-zero.
    #[track_caller]
    pub fn any(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let axes = self.reduce_axes("any", axes)?;
        self.cast_to(ScalarType::Bool)?
            .reduce_to(ReduceOp::Max, &axes, keepdim)
    }

    /// True where every element over `axes` is non-zero.
    #[track_caller]
    pub fn all(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let axes = self.reduce_axes("all", axes)?;
        self.cast_to(ScalarType::Bool)?
            .reduce_to(ReduceOp::Min, &axes, keepdim)
    }

    /// `log(sum(exp(x)))` over `axes`, computed stably by subtracting the
    /// maximum first (an infinite maximum is left out of the shift).
    #[track_caller]
    pub fn logsumexp(&self, axes: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let norm = self.reduce_axes("logsumexp", axes)?;
        let x = self.to_float()?;
        let m = x.reduce_to(ReduceOp::Max, &norm, true)?;
        let zero = m.filled(0.0)?;
        let shift = m.isinf()?.where_(&zero, &m)?;
        let e = x.sub(&shift)?.exp()?;
        let s = e.reduce_to(ReduceOp::Add, &norm, true)?.log()?;
        let out = Tensor::alu(Op::Add, &[&s, &shift])?;
        if keepdim {
            Ok(out)
        } else {
            out.reshape_to(&reduce_shape(out.shape(), &norm, false))
        }
    }

    /// Running sum along `axis`, with the dtype rules of [`Tensor::sum`].
    #[track_caller]
    pub fn cumsum(&self, axis: isize) -> Result<Tensor> {
        let ax = self.axis("cumsum", axis)?;
        let dtype = self.graph()?.dtype;
        if self.ndim() == 0 {
            return self.cast_to(sum_result(dtype));
        }
        self.cumsum_axis("cumsum", ax)?.cast_to(sum_result(dtype))
    }

    /// Running sum along a normalized axis, in the accumulator dtype (see
    /// [`Tensor::running_axis`]). Errors name `op`.
    #[track_caller]
    pub(super) fn cumsum_axis(&self, op: &str, ax: usize) -> Result<Tensor> {
        self.cast_to(self.graph()?.dtype.sum_accumulator())?
            .running_axis(op, ax, ReduceOp::Add)
    }

    /// Running reduction `how` along a normalized axis, in `self`'s dtype:
    /// each window of [`Tensor::running_windows`] reduced. Errors name
    /// `op`.
    #[track_caller]
    pub(super) fn running_axis(&self, op: &str, ax: usize, how: ReduceOp) -> Result<Tensor> {
        if self.shape()[ax] <= 1 {
            return Ok(self.clone());
        }
        let last = self.ndim() - 1;
        let identity = how.identity(self.graph()?.dtype);
        let windows = self.running_windows(op, ax, identity)?;
        windows
            .reduce_to(how, &[last + 1], false)?
            .swap_axes(ax, last)
    }

    /// The prefixes of a normalized axis of length `n > 1` as windows: the
    /// axis is moved last, padded with `n - 1` copies of `fill` in front
    /// and cut into `n` windows of length `n` (a new last axis; window `i`
    /// ends at element `i`). Errors name `op`.
    #[track_caller]
    fn running_windows(&self, op: &str, ax: usize, fill: ConstValue) -> Result<Tensor> {
        let n = self.shape()[ax];
        let last = self.ndim() - 1;
        let x = self.swap_axes(ax, last)?;
        let mut pads = vec![(0, 0); x.ndim()];
        pads[last] = (n - 1, 0);
        x.pad_with(op, &pads, fill)?.pool(op, &[n], &[1], &[1])
    }

    /// Running product along `axis`, with the dtype rules of
    /// [`Tensor::prod`].
    #[track_caller]
    pub fn cumprod(&self, axis: isize) -> Result<Tensor> {
        let ax = self.axis("cumprod", axis)?;
        let dtype = self.graph()?.dtype;
        let x = self.cast_to(dtype.sum_accumulator())?;
        if self.ndim() == 0 {
            return x.cast_to(sum_result(dtype));
        }
        x.running_axis("cumprod", ax, ReduceOp::Mul)?
            .cast_to(sum_result(dtype))
    }

    /// Running maximum along `axis` and the `i64` index where each
    /// running maximum was (last) reached, like `torch.cummax`; NaN
    /// propagates, with the index of the last NaN so far.
    #[track_caller]
    pub fn cummax(&self, axis: isize) -> Result<(Tensor, Tensor)> {
        self.running_extreme("cummax", axis, ReduceOp::Max)
    }

    /// Running minimum and its index, like [`Tensor::cummax`].
    #[track_caller]
    pub fn cummin(&self, axis: isize) -> Result<(Tensor, Tensor)> {
        self.running_extreme("cummin", axis, ReduceOp::Min)
    }

    #[track_caller]
    fn running_extreme(&self, op: &str, axis: isize, how: ReduceOp) -> Result<(Tensor, Tensor)> {
        let ax = self.axis(op, axis)?;
        if self.ndim() == 0 {
            let zero = Tensor::constant(ConstValue::Int(0), ScalarType::I64, &[]);
            return Ok((self.clone(), zero));
        }
        let mut pairs = self.shape().to_vec();
        pairs.insert(ax, pairs[ax]);
        super::checked_numel(op, &pairs)?;
        let values = self.running_axis(op, ax, how)?;
        // Index: the last j <= i with x[j] equal to the running value
        // (NaN matching NaN), over an [.., i, j, ..] comparison.
        let n = self.shape()[ax];
        let xj = self.unsqueeze_at(ax)?; // [.., 1, n(j), ..]
        let vi = values.unsqueeze_at(ax + 1)?; // [.., n(i), 1, ..]
        let mut same = xj.eq(&vi)?;
        if self.graph()?.dtype.is_float() {
            same = same.logical_or(&xj.isnan()?.logical_and(&vi.isnan()?)?)?;
        }
        let count = Tensor::counting(op, n, ScalarType::I64)?;
        let j = count.reshape_to(&[1, n])?;
        let i = count.reshape_to(&[n, 1])?;
        let mut at = vec![1; self.ndim() + 1];
        at[ax] = n;
        at[ax + 1] = n;
        let upto = j.le(&i)?.reshape_to(&at)?;
        let jpos = j.reshape_to(&{
            let mut s = vec![1; self.ndim() + 1];
            s[ax + 1] = n;
            s
        })?;
        let hit = same.logical_and(&upto)?;
        let idx = hit
            .where_(&jpos, -1i64)?
            .reduce_to(ReduceOp::Max, &[ax + 1], false)?;
        Ok((values, idx))
    }

    /// `log(cumsum(exp(x)))` along `axis`. Each prefix is shifted by its
    /// own (finite) maximum, so a small early element next to a large
    /// later one does not underflow (`[0, 100]` gives `[0, 100]`).
    #[track_caller]
    pub fn logcumsumexp(&self, axis: isize) -> Result<Tensor> {
        let ax = self.axis("logcumsumexp", axis)?;
        let x = self.to_float()?;
        if x.ndim() == 0 || x.shape()[ax] <= 1 {
            return Ok(x);
        }
        let last = x.ndim() - 1;
        let dtype = x.graph()?.dtype;
        let windows = x.running_windows("logcumsumexp", ax, ReduceOp::Max.identity(dtype))?;
        let m = windows.reduce_to(ReduceOp::Max, &[last + 1], true)?;
        let zero = m.filled(0.0)?;
        let shift = m.isinf()?.logical_or(&m.isnan()?)?.where_(&zero, &m)?;
        let sums = windows
            .sub(&shift)?
            .exp()?
            .reduce_to(ReduceOp::Add, &[last + 1], true)?;
        let out = sums.log()?.add(&shift)?;
        let mut shape = out.shape().to_vec();
        shape.pop();
        out.reshape_to(&shape)?.swap_axes(ax, last)
    }
}
