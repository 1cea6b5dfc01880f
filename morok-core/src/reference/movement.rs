//! Movement ops and REDUCE_AXIS in the reference evaluator. A movement op
//! builds a [`View`] (an index map onto an evaluated array); the elements
//! are gathered by index arithmetic only when a consumer needs them.

use super::values::{Arr, EvalError, Vals};
use crate::shape::{numel, reduce_shape};
use crate::uop::{Arg, ConstValue, Op, ReduceOp, UOp};
use smallvec::{smallvec, SmallVec};
use std::sync::Arc;

/// Row-major strides of a shape.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut out = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * shape[i + 1];
    }
    out
}

/// Maps a multi-index of a view to the flat index of the element it shows
/// in the view's base array, or `None` for padding (zero).
pub(super) type IndexMap = Arc<dyn Fn(&[usize]) -> Option<usize> + Send + Sync>;

/// A chain of movement ops over an evaluated array, not materialized: a
/// convolution's windows expand their input to far more elements than the
/// result they feed, so only the nodes an ALU op or a reduction reads are
/// computed element by element ([`View::materialize`]).
#[derive(Clone)]
pub(super) struct View {
    /// The array every element comes from.
    pub base: Arc<Arr>,
    /// The view's shape.
    pub shape: Vec<usize>,
    /// Where each element comes from.
    pub map: IndexMap,
}

impl View {
    /// The whole of `base`, in its own shape.
    pub fn of(base: Arc<Arr>) -> View {
        let st = strides(&base.shape);
        View {
            shape: base.shape.clone(),
            base,
            map: Arc::new(move |idx| Some(idx.iter().zip(&st).map(|(i, s)| i * s).sum())),
        }
    }

    /// The view's elements as a dense array (`node` names errors: more than
    /// [`super::values::MAX_ELEMENTS`] elements are refused).
    pub fn materialize(&self, node: &UOp) -> Result<Arr, EvalError> {
        let n = numel(&self.shape);
        if n > super::values::MAX_ELEMENTS {
            return Err(EvalError::new(
                node,
                format!(
                    "shape {:?} has more than {} elements",
                    self.shape,
                    super::values::MAX_ELEMENTS
                ),
            ));
        }
        let vals = match &self.base.vals {
            Vals::F(v) => {
                let mut out = Vec::with_capacity(n);
                self.for_each(|_, p| out.push(p.map_or(0.0, |i| v[i])));
                Vals::F(out)
            }
            Vals::I(v) => {
                let mut out = Vec::with_capacity(n);
                self.for_each(|_, p| out.push(p.map_or(0, |i| v[i])));
                Vals::I(out)
            }
        };
        Ok(Arr {
            shape: self.shape.clone(),
            dtype: self.base.dtype,
            vals,
        })
    }

    /// Calls `f(multi-index, base element)` for every element in row-major
    /// order.
    fn for_each(&self, mut f: impl FnMut(&[usize], Option<usize>)) {
        let mut idx = vec![0usize; self.shape.len()];
        for _ in 0..numel(&self.shape) {
            f(&idx, (self.map)(&idx));
            // Odometer increment of the multi-index.
            for axis in (0..self.shape.len()).rev() {
                idx[axis] += 1;
                if idx[axis] < self.shape[axis] {
                    break;
                }
                idx[axis] = 0;
            }
        }
    }

    /// This view seen through `f` (a view of shape `shape` whose elements
    /// are, by `f`, flat row-major indices into this view).
    fn then(
        &self,
        shape: Vec<usize>,
        f: impl Fn(&[usize]) -> Option<usize> + Send + Sync + 'static,
    ) -> View {
        let inner = self.map.clone();
        let src_shape = self.shape.clone();
        View {
            base: self.base.clone(),
            shape,
            map: Arc::new(move |idx| {
                let mut flat = f(idx)?;
                let mut src: SmallVec<[usize; 8]> = smallvec![0; src_shape.len()];
                for (axis, &d) in src_shape.iter().enumerate().rev() {
                    src[axis] = flat % d.max(1);
                    flat /= d.max(1);
                }
                inner(&src)
            }),
        }
    }
}

fn bad(node: &UOp, shape: &[usize]) -> EvalError {
    EvalError::new(
        node,
        format!("arg {} does not fit source shape {:?}", node.arg(), shape),
    )
}

/// Evaluates RESHAPE, PERMUTE, EXPAND, PAD, SHRINK and FLIP as a view of
/// `x` (nothing is computed here).
pub(super) fn movement(node: &UOp, x: &View, arg: &Arg) -> Result<View, EvalError> {
    let rank = x.shape.len();
    let st = strides(&x.shape);
    let src_shape = x.shape.clone();
    match (node.op(), arg) {
        (Op::Reshape, Arg::Shape(s)) => {
            if numel(s) != numel(&x.shape) {
                return Err(bad(node, &x.shape));
            }
            let out_st = strides(s);
            Ok(x.then(s.to_vec(), move |idx| {
                Some(idx.iter().zip(&out_st).map(|(i, s)| i * s).sum())
            }))
        }
        (Op::Permute, Arg::Axes(perm)) => {
            let mut sorted = perm.to_vec();
            sorted.sort_unstable();
            if sorted != (0..rank).collect::<Vec<_>>() {
                return Err(bad(node, &x.shape));
            }
            let shape = perm.iter().map(|&p| x.shape[p]).collect();
            let perm = perm.to_vec();
            Ok(x.then(shape, move |idx| {
                Some(perm.iter().zip(idx).map(|(&p, &i)| i * st[p]).sum())
            }))
        }
        (Op::Expand, Arg::Shape(s)) => {
            if s.len() != rank || x.shape.iter().zip(s).any(|(&a, &b)| a != b && a != 1) {
                return Err(bad(node, &x.shape));
            }
            Ok(x.then(s.to_vec(), move |idx| {
                Some(
                    idx.iter()
                        .zip(&src_shape)
                        .zip(&st)
                        .map(|((&i, &d), &s)| if d == 1 { 0 } else { i * s })
                        .sum(),
                )
            }))
        }
        (Op::Pad, Arg::Pairs(p)) => {
            if p.len() != rank || p.iter().any(|&(a, b)| a < 0 || b < 0) {
                return Err(bad(node, &x.shape));
            }
            let shape = x
                .shape
                .iter()
                .zip(p)
                .map(|(&d, &(a, b))| d + a as usize + b as usize)
                .collect();
            let p = p.to_vec();
            Ok(x.then(shape, move |idx| {
                let mut flat = 0;
                for axis in 0..idx.len() {
                    let i = idx[axis] as i64 - p[axis].0;
                    if i < 0 || i >= src_shape[axis] as i64 {
                        return None;
                    }
                    flat += i as usize * st[axis];
                }
                Some(flat)
            }))
        }
        (Op::Shrink, Arg::Pairs(p)) => {
            if p.len() != rank
                || p.iter()
                    .zip(&x.shape)
                    .any(|(&(b, e), &d)| b < 0 || b > e || e as usize > d)
            {
                return Err(bad(node, &x.shape));
            }
            let shape = p.iter().map(|&(b, e)| (e - b) as usize).collect();
            let p = p.to_vec();
            Ok(x.then(shape, move |idx| {
                Some(
                    idx.iter()
                        .zip(&p)
                        .zip(&st)
                        .map(|((&i, &(b, _)), &s)| (i + b as usize) * s)
                        .sum(),
                )
            }))
        }
        (Op::Flip, Arg::Axes(axes)) => {
            if axes.iter().any(|&a| a >= rank) {
                return Err(bad(node, &x.shape));
            }
            let axes = axes.to_vec();
            Ok(x.then(src_shape.clone(), move |idx| {
                Some(
                    (0..idx.len())
                        .map(|a| {
                            let i = if axes.contains(&a) {
                                src_shape[a] - 1 - idx[a]
                            } else {
                                idx[a]
                            };
                            i * st[a]
                        })
                        .sum(),
                )
            }))
        }
        _ => Err(bad(node, &x.shape)),
    }
}

/// Evaluates REDUCE_AXIS over a view (read in place, not materialized):
/// the reduced axes stay, with size 1.
pub(super) fn reduce(node: &UOp, x: &View, op: ReduceOp, axes: &[usize]) -> Result<Arr, EvalError> {
    if axes.iter().any(|&a| a >= x.shape.len()) {
        return Err(bad(node, &x.shape));
    }
    let shape = reduce_shape(&x.shape, axes, true).to_vec();
    let out_st: Vec<usize> = strides(&shape)
        .iter()
        .enumerate()
        .map(|(a, &s)| if axes.contains(&a) { 0 } else { s })
        .collect();
    // The output slot of an element at multi-index `idx`.
    let slot = |idx: &[usize]| -> usize { idx.iter().zip(&out_st).map(|(i, s)| i * s).sum() };
    let n = numel(&shape);
    let identity = op.identity(x.base.dtype);
    let dtype = x.base.dtype;
    let vals = match &x.base.vals {
        Vals::F(v) => {
            let mut acc = vec![identity.as_f64(); n];
            x.for_each(|idx, p| {
                let a = p.map_or(0.0, |i| v[i]);
                let r = &mut acc[slot(idx)];
                *r = match op {
                    ReduceOp::Add => *r + a,
                    ReduceOp::Mul => *r * a,
                    _ if r.is_nan() || a.is_nan() => f64::NAN,
                    ReduceOp::Max => r.max(a),
                    ReduceOp::Min => r.min(a),
                };
            });
            super::values::vals_from_f64(dtype, acc)
        }
        Vals::I(v) => {
            let start = match identity {
                ConstValue::Float(_) => 0,
                c => c.as_i128().unwrap_or(0),
            };
            let mut acc = vec![start; n];
            x.for_each(|idx, p| {
                let a = p.map_or(0, |i| v[i]);
                let r = &mut acc[slot(idx)];
                *r = match op {
                    ReduceOp::Add => super::values::wrap(r.wrapping_add(a), dtype),
                    ReduceOp::Mul => super::values::wrap(r.wrapping_mul(a), dtype),
                    ReduceOp::Max => (*r).max(a),
                    ReduceOp::Min => (*r).min(a),
                };
            });
            Vals::I(acc)
        }
    };
    Ok(Arr { shape, dtype, vals })
}
