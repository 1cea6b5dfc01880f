//! Split huge reductions into two kernels (tensor level).
//!
//! Matches `REDUCE_AXIS(op, axes)` whose input has at least
//! [`SPLIT_THRESHOLD`] times more elements than its output, and one reduced
//! axis of size `n` with a divisor `d` in `8..=256` (largest first) on an
//! axis that is not a broadcast. Produces
//!
//! ```text
//! RESHAPE(REDUCE_AXIS(op, [a])(CONTIGUOUS(REDUCE_AXIS(op, axes')(RESHAPE(x, …, d, n/d, …)))), out shape)
//! ```
//!
//! The first stage reduces `d` contiguous chunks of `n/d` elements each
//! (axis `a` split into `(d, n/d)`, the chunk axis and the other reduced
//! axes reduced), the second combines the `d` partial results. Correct
//! because the reduction op is associative and commutative. The first stage
//! then has `d` times more output parallelism; without the split a single
//! output element would carry the whole loop.

use crate::patterns;
use crate::rewrite::{PatternMatcher, RuleError};
use crate::shape::numel;
use crate::uop::tensor_shape;
use crate::uop::{Arg, Op, Shape, UOp};
use smallvec::smallvec;
use std::sync::Arc;

/// Input/output element ratio from which a reduction is split.
pub const SPLIT_THRESHOLD: usize = 32768;

/// The split-reduce rule set.
pub fn split_reduce_rules() -> PatternMatcher {
    patterns! {
        @name "split-reduce";
        n @ ReduceAxis(_) => try {
            let shapes = tensor_shape(n.s(0)).and_then(|i| Ok((i, tensor_shape(n)?)));
            shapes.map(|(i, o)| split(n, i, o)).map_err(|e| RuleError::new(e.to_string()))
        },
    }
}

/// The split of `n` (input shape `in_shape`, output shape `out_shape`),
/// if it is worth one.
fn split(n: &Arc<UOp>, in_shape: Shape, out_shape: Shape) -> Option<Arc<UOp>> {
    let Arg::ReduceAxis(op, axes) = n.arg() else {
        return None;
    };
    let x = n.s(0);
    let out_numel = numel(&out_shape).max(1);
    if numel(&in_shape) / out_numel < SPLIT_THRESHOLD {
        return None;
    }
    // A broadcast axis holds one value; splitting it buys nothing.
    let broadcast_axis = |a: usize| {
        x.op() == Op::Expand && tensor_shape(x.s(0)).is_ok_and(|s| s[a] == 1 && in_shape[a] != 1)
    };
    let max_d = (256).min((1usize << 22) / out_numel);
    let (a, d) = axes
        .iter()
        .filter(|&&a| !broadcast_axis(a))
        .flat_map(|&a| (8..=max_d).rev().map(move |d| (a, d)))
        .find(|&(a, d)| in_shape[a].is_multiple_of(d) && in_shape[a] / d > 1)?;
    let mut split_shape: Shape = in_shape.clone();
    split_shape[a] = in_shape[a] / d;
    split_shape.insert(a, d);
    let reshaped = UOp::new(
        Op::Reshape,
        x.dtype(),
        smallvec![x.clone()],
        Arg::Shape(split_shape),
    );
    // Axes after `a` move one to the right; `a` itself becomes the chunk axis a+1.
    let stage1_axes = axes
        .iter()
        .map(|&b| if b >= a { b + 1 } else { b })
        .collect();
    let stage1 = UOp::new(
        Op::ReduceAxis,
        n.dtype(),
        smallvec![reshaped],
        Arg::ReduceAxis(*op, stage1_axes),
    );
    let contiguous = UOp::new(Op::Contiguous, n.dtype(), smallvec![stage1], Arg::None);
    let stage2 = UOp::new(
        Op::ReduceAxis,
        n.dtype(),
        smallvec![contiguous],
        Arg::ReduceAxis(*op, smallvec![a]),
    );
    Some(UOp::new(
        Op::Reshape,
        n.dtype(),
        smallvec![stage2],
        Arg::Shape(out_shape),
    ))
}
