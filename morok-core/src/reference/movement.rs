//! Movement ops and REDUCE_AXIS in the reference evaluator: each output
//! element is gathered from the source by index arithmetic.

use super::{Arr, EvalError, Vals};
use crate::shape::{numel, reduce_shape};
use crate::uop::{Arg, ConstValue, Op, ReduceOp, UOp};

/// Row-major strides of a shape.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut out = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * shape[i + 1];
    }
    out
}

/// Builds an array of `shape` whose element at multi-index `idx` is the
/// source element `map(idx)` (row-major flat index), or zero when `map`
/// returns `None` (padding).
fn gather(x: &Arr, shape: Vec<usize>, map: impl Fn(&[usize]) -> Option<usize>) -> Arr {
    let n = numel(&shape);
    let mut idx = vec![0usize; shape.len()];
    let mut picks: Vec<Option<usize>> = Vec::with_capacity(n);
    for _ in 0..n {
        picks.push(map(&idx));
        // Odometer increment of the multi-index.
        for axis in (0..shape.len()).rev() {
            idx[axis] += 1;
            if idx[axis] < shape[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
    let vals = match &x.vals {
        Vals::F(v) => Vals::F(picks.iter().map(|p| p.map_or(0.0, |i| v[i])).collect()),
        Vals::I(v) => Vals::I(picks.iter().map(|p| p.map_or(0, |i| v[i])).collect()),
    };
    Arr {
        shape,
        dtype: x.dtype,
        vals,
    }
}

fn bad(node: &UOp, x: &Arr) -> EvalError {
    EvalError::new(
        node,
        format!("arg {} does not fit source shape {:?}", node.arg(), x.shape),
    )
}

/// Evaluates RESHAPE, PERMUTE, EXPAND, PAD, SHRINK and FLIP.
pub(super) fn movement(node: &UOp, x: &Arr, arg: &Arg) -> Result<Arr, EvalError> {
    let rank = x.shape.len();
    let st = strides(&x.shape);
    match (node.op(), arg) {
        (Op::Reshape, Arg::Shape(s)) => {
            if numel(s) != x.len() {
                return Err(bad(node, x));
            }
            Ok(Arr {
                shape: s.to_vec(),
                dtype: x.dtype,
                vals: x.vals.clone(),
            })
        }
        (Op::Permute, Arg::Axes(perm)) => {
            let mut sorted = perm.to_vec();
            sorted.sort_unstable();
            if sorted != (0..rank).collect::<Vec<_>>() {
                return Err(bad(node, x));
            }
            let shape = perm.iter().map(|&p| x.shape[p]).collect();
            Ok(gather(x, shape, |idx| {
                Some(perm.iter().zip(idx).map(|(&p, &i)| i * st[p]).sum())
            }))
        }
        (Op::Expand, Arg::Shape(s)) => {
            if s.len() != rank || x.shape.iter().zip(s).any(|(&a, &b)| a != b && a != 1) {
                return Err(bad(node, x));
            }
            let src_shape = x.shape.clone();
            Ok(gather(x, s.to_vec(), |idx| {
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
                return Err(bad(node, x));
            }
            let shape = x
                .shape
                .iter()
                .zip(p)
                .map(|(&d, &(a, b))| d + a as usize + b as usize)
                .collect();
            let src_shape = x.shape.clone();
            Ok(gather(x, shape, |idx| {
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
                return Err(bad(node, x));
            }
            let shape = p.iter().map(|&(b, e)| (e - b) as usize).collect();
            Ok(gather(x, shape, |idx| {
                Some(
                    idx.iter()
                        .zip(p)
                        .zip(&st)
                        .map(|((&i, &(b, _)), &s)| (i + b as usize) * s)
                        .sum(),
                )
            }))
        }
        (Op::Flip, Arg::Axes(axes)) => {
            if axes.iter().any(|&a| a >= rank) {
                return Err(bad(node, x));
            }
            let src_shape = x.shape.clone();
            Ok(gather(x, src_shape.clone(), |idx| {
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
        _ => Err(bad(node, x)),
    }
}

/// Evaluates REDUCE_AXIS: the reduced axes stay, with size 1.
pub(super) fn reduce(node: &UOp, x: &Arr, op: ReduceOp, axes: &[usize]) -> Result<Arr, EvalError> {
    if axes.iter().any(|&a| a >= x.shape.len()) {
        return Err(bad(node, x));
    }
    let shape = reduce_shape(&x.shape, axes, true).to_vec();
    let out_st = strides(&shape);
    // The output slot of every source element.
    let mut slots = Vec::with_capacity(x.len());
    let mut idx = vec![0usize; x.shape.len()];
    for _ in 0..x.len() {
        let slot: usize = (0..idx.len())
            .filter(|a| !axes.contains(a))
            .map(|a| idx[a] * out_st[a])
            .sum();
        slots.push(slot);
        for axis in (0..idx.len()).rev() {
            idx[axis] += 1;
            if idx[axis] < x.shape[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
    let n = numel(&shape);
    let identity = op.identity(x.dtype);
    let vals = match &x.vals {
        Vals::F(v) => {
            let mut acc = vec![identity.as_f64(); n];
            for (&slot, &a) in slots.iter().zip(v) {
                let r = &mut acc[slot];
                *r = match op {
                    ReduceOp::Add => *r + a,
                    ReduceOp::Mul => *r * a,
                    _ if r.is_nan() || a.is_nan() => f64::NAN,
                    ReduceOp::Max => r.max(a),
                    ReduceOp::Min => r.min(a),
                };
            }
            super::vals_from_f64(x.dtype, acc)
        }
        Vals::I(v) => {
            let start = match identity {
                ConstValue::Float(_) => 0,
                c => c.as_i128().unwrap_or(0),
            };
            let mut acc = vec![start; n];
            for (&slot, &a) in slots.iter().zip(v) {
                let r = &mut acc[slot];
                *r = match op {
                    ReduceOp::Add => super::wrap(r.wrapping_add(a), x.dtype),
                    ReduceOp::Mul => super::wrap(r.wrapping_mul(a), x.dtype),
                    ReduceOp::Max => (*r).max(a),
                    ReduceOp::Min => (*r).min(a),
                };
            }
            Vals::I(acc)
        }
    };
    Ok(Arr {
        shape,
        dtype: x.dtype,
        vals,
    })
}
