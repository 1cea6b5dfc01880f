//! Tensors made from constants: `full`, `zeros`, `ones`, `arange`,
//! `linspace`, `eye`.
//!
//! Constants are CONST nodes broadcast with RESHAPE + EXPAND. `arange` is a
//! cumulative sum of ones (a REDUCE_AXIS over a sliding window, see
//! `cumsum`) scaled and shifted; `eye` is a padded column of ones viewed
//! with a row stride one longer than the row, which puts the ones on the
//! diagonal.

use super::operand::const_value;
use super::Tensor;
use crate::error::{Error, Result};
use morok_core::dtype::Element;
use morok_core::uop::UOp;
use morok_core::{ConstValue, DType, ScalarType};

/// The longest count [`Tensor::counting`] builds as one running sum (whose
/// windows view the square of its length); longer ones combine two.
const DIRECT_COUNT: usize = 1024;
/// The longest count [`Tensor::counting`] builds: its two running sums of
/// about `√n` elements view `2·(√n)³` elements, which must fit a `usize`
/// (2^40 elements of f32 are 4 TiB, beyond any allocation anyway).
const MAX_COUNT: usize = 1 << 40;

/// The element type of a dtype a tensor can hold.
#[track_caller]
pub(super) fn element_type(op: &str, dtype: DType) -> Result<ScalarType> {
    let s = dtype.scalar_type();
    if dtype.is_vector() || dtype.is_ptr() || matches!(s, ScalarType::Void | ScalarType::Index) {
        return Err(Error::dtype(
            op,
            format!("{dtype} is not a tensor element type"),
        ));
    }
    Ok(s)
}

impl Tensor {
    /// `value` (converted to `dtype`) broadcast to `shape`.
    #[track_caller]
    pub(super) fn constant(value: ConstValue, dtype: ScalarType, shape: &[usize]) -> Tensor {
        if let Err(e) = super::checked_numel("full", shape) {
            return Tensor::failed(e);
        }
        let uop = UOp::const_(DType::scalar(dtype), value);
        let scalar = Tensor::from_parts(uop, Default::default(), Vec::new());
        Tensor::lift(scalar.expand_to(shape))
    }

    /// A tensor of `shape` filled with `value`, of `value`'s dtype.
    #[track_caller]
    pub fn full<T: Element>(shape: &[usize], value: T) -> Tensor {
        Tensor::constant(const_value(value), T::SCALAR, shape)
    }

    /// A tensor of `shape` filled with zeros of `dtype`.
    #[track_caller]
    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::lift(Tensor::typed_constant(
            "zeros",
            shape,
            dtype,
            ConstValue::zero,
        ))
    }

    /// A tensor of `shape` filled with ones of `dtype`.
    #[track_caller]
    pub fn ones(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::lift(Tensor::typed_constant(
            "ones",
            shape,
            dtype,
            ConstValue::one,
        ))
    }

    /// `value(t)` broadcast to `shape`, with `t` the element type of
    /// `dtype`; errors name `op`.
    #[track_caller]
    fn typed_constant(
        op: &str,
        shape: &[usize],
        dtype: DType,
        value: fn(ScalarType) -> ConstValue,
    ) -> Result<Tensor> {
        let t = element_type(op, dtype)?;
        super::checked_numel(op, shape)?;
        Ok(Tensor::constant(value(t), t, shape))
    }

    /// A tensor of `self`'s shape and dtype filled with `value`.
    #[track_caller]
    pub fn full_like<T: Element>(&self, value: T) -> Result<Tensor> {
        let g = self.graph()?;
        Ok(Tensor::constant(const_value(value), g.dtype, &g.shape))
    }

    /// Zeros of `self`'s shape and dtype.
    #[track_caller]
    pub fn zeros_like(&self) -> Result<Tensor> {
        let g = self.graph()?;
        Ok(Tensor::constant(
            ConstValue::zero(g.dtype),
            g.dtype,
            &g.shape,
        ))
    }

    /// Ones of `self`'s shape and dtype.
    #[track_caller]
    pub fn ones_like(&self) -> Result<Tensor> {
        let g = self.graph()?;
        Ok(Tensor::constant(
            ConstValue::one(g.dtype),
            g.dtype,
            &g.shape,
        ))
    }

    /// `[start, start + step, ...]` up to (excluding) `end`, of `T`'s dtype.
    #[track_caller]
    pub fn arange<T: Element>(start: T, end: T, step: T) -> Result<Tensor> {
        let (a, b, s) = (start.to_f64(), end.to_f64(), step.to_f64());
        if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
            return Err(Error::argument(
                "arange",
                format!("cannot count from {start:?} to {end:?} in steps of {step:?}"),
            ));
        }
        let n = ((b - a) / s).ceil().max(0.0) as usize;
        Tensor::counting("arange", n, T::SCALAR)?.scale_shift(const_value(step), const_value(start))
    }

    /// `steps` evenly spaced values from `start` to `end` inclusive.
    #[track_caller]
    pub fn linspace<T: Element>(start: T, end: T, steps: usize) -> Result<Tensor> {
        let (a, b) = (start.to_f64(), end.to_f64());
        if !a.is_finite() || !b.is_finite() {
            return Err(Error::argument(
                "linspace",
                format!("bounds {start:?} and {end:?} must be finite"),
            ));
        }
        let delta = if steps > 1 {
            (b - a) / (steps - 1) as f64
        } else {
            0.0
        };
        let dtype = T::SCALAR.to_float();
        let idx = Tensor::counting("linspace", steps, dtype)?;
        let scaled = idx.scale_shift(ConstValue::Float(delta), ConstValue::Float(a))?;
        scaled.cast_to(T::SCALAR)
    }

    /// PyTorch's `arange(start, end, step, dtype=...)`: the values are
    /// counted in `dtype` (integers exactly) from bounds given as `f64`.
    #[track_caller]
    pub fn arange_dtype(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
        let t = element_type("arange", dtype)?;
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !end.is_finite() || t.is_bool()
        {
            return Err(Error::argument(
                "arange",
                format!("cannot count from {start} to {end} in steps of {step} as {dtype}"),
            ));
        }
        let n = ((end - start) / step).ceil().max(0.0) as usize;
        let (a, s) = (
            ConstValue::from_f64(start, t),
            ConstValue::from_f64(step, t),
        );
        Tensor::counting("arange", n, t)?.scale_shift(s, a)
    }

    /// PyTorch's `linspace(start, end, steps, dtype=...)`: computed in
    /// floats, then cast to `dtype`.
    #[track_caller]
    pub fn linspace_dtype(start: f64, end: f64, steps: usize, dtype: DType) -> Result<Tensor> {
        let t = element_type("linspace", dtype)?;
        if t.is_bool() {
            // PyTorch refuses it too: evenly spaced values have no bool form.
            return Err(Error::dtype(
                "linspace",
                format!("linspace({start}, {end}, {steps}) cannot make bool values"),
            ));
        }
        Tensor::linspace(start, end, steps)?.cast_to(t)
    }

    /// PyTorch's `eye(n, m)`: `n × m` with ones on the main diagonal.
    #[track_caller]
    pub fn eye_rect(n: usize, m: usize, dtype: DType) -> Result<Tensor> {
        let k = n.max(m);
        Tensor::eye_graph(k, dtype)?.shrink_to(&[(0, n), (0, m)])
    }

    /// PyTorch's `empty(shape, dtype)`. Morok has no uninitialized
    /// memory: the elements are zeros (a constant, no buffer).
    #[track_caller]
    pub fn empty(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::zeros(shape, dtype)
    }

    /// The `n × n` identity matrix of `dtype`.
    #[track_caller]
    pub fn eye(n: usize, dtype: DType) -> Tensor {
        Tensor::lift(Tensor::eye_graph(n, dtype))
    }

    #[track_caller]
    fn eye_graph(n: usize, dtype: DType) -> Result<Tensor> {
        let t = element_type("eye", dtype)?;
        super::checked_numel("eye", &[n, n.saturating_add(1)])?;
        let column = Tensor::constant(ConstValue::one(t), t, &[n, 1]);
        // Rows of length n + 1 with the one first, read back with rows of
        // length n: row r starts r places later, so its one sits at column r.
        let padded = column.pad_to("eye", &[(0, 0), (0, n)])?;
        let flat = padded.reshape_to(&[n * (n + 1)])?;
        flat.shrink_to(&[(0, n * n)])?.reshape_to(&[n, n])
    }

    /// `[0, 1, ..., n - 1]` of `dtype`; errors name `op`.
    ///
    /// Up to [`DIRECT_COUNT`] elements this is the cumulative sum of ones,
    /// minus 1 ([`Tensor::count_direct`]), whose windows view `n²`
    /// elements. Longer counts are built from two short ones: with
    /// `b = ⌈√n⌉` columns and `a = ⌈n / b⌉` rows, element `i = q·b + r`
    /// (`q = i / b`, `r = i % b`) is `rows[q]·b + cols[r]`, an `[a, b]`
    /// grid of broadcasts flattened and cut to `n`. Every node then views
    /// O(n) elements (the reference evaluator stays linear), and the
    /// scheduler still sees plain index arithmetic: each short count
    /// collapses to its range, and `(i / b)·b + i % b` folds back to `i`.
    #[track_caller]
    pub(super) fn counting(op: &str, n: usize, dtype: ScalarType) -> Result<Tensor> {
        if dtype.is_bool() {
            return Err(Error::dtype(op, "cannot count in bool"));
        }
        if n > MAX_COUNT {
            return Err(Error::argument(
                op,
                format!("{n} elements are more than the 2^40 this op can count"),
            ));
        }
        if n <= DIRECT_COUNT {
            return Tensor::count_direct(op, n, dtype);
        }
        // Floats count in an integer type (exact, and the index arithmetic
        // folds) and are converted once.
        let t = match dtype {
            t if !t.is_float() => t,
            _ if i32::try_from(n).is_ok() => ScalarType::I32,
            _ => ScalarType::I64,
        };
        let cols = n.isqrt() + usize::from(n.isqrt() * n.isqrt() < n);
        let rows = n.div_ceil(cols);
        let width = Tensor::constant(ConstValue::from_i128(cols as i128, t), t, &[rows, 1]);
        let outer = Tensor::count_direct(op, rows, t)?.reshape_to(&[rows, 1])?;
        let outer = Tensor::alu(morok_core::Op::Mul, &[&outer, &width])?;
        let inner = Tensor::count_direct(op, cols, t)?.reshape_to(&[1, cols])?;
        let grid = Tensor::alu(
            morok_core::Op::Add,
            &[
                &outer.expand_to(&[rows, cols])?,
                &inner.expand_to(&[rows, cols])?,
            ],
        )?;
        grid.reshape_to(&[rows * cols])?
            .shrink_to(&[(0, n)])?
            .cast_to(dtype)
    }

    /// `[0, 1, ..., n - 1]` as the cumulative sum of ones minus 1 (views
    /// `n²` elements, so `n²` must fit).
    #[track_caller]
    fn count_direct(op: &str, n: usize, dtype: ScalarType) -> Result<Tensor> {
        if !matches!(n.checked_mul(n), Some(sq) if sq <= isize::MAX as usize) {
            return Err(Error::argument(
                op,
                format!("cannot count {n} elements: the running sum views {n}² of them"),
            ));
        }
        let ones = Tensor::constant(ConstValue::one(dtype), dtype, &[n]);
        let upto = ones.cumsum_axis(op, 0)?.cast_to(dtype)?;
        let one = Tensor::constant(ConstValue::one(dtype), dtype, &[n]);
        Tensor::alu(morok_core::Op::Sub, &[&upto, &one])
    }

    /// `self * scale + shift` with constants of `self`'s dtype.
    #[track_caller]
    fn scale_shift(&self, scale: ConstValue, shift: ConstValue) -> Result<Tensor> {
        let g = self.graph()?;
        let (dtype, shape) = (g.dtype, g.shape.clone());
        let scaled = Tensor::alu(
            morok_core::Op::Mul,
            &[self, &Tensor::constant(scale, dtype, &shape)],
        )?;
        Tensor::alu(
            morok_core::Op::Add,
            &[&scaled, &Tensor::constant(shift, dtype, &shape)],
        )
    }
}
