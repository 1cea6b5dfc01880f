//! The core of rangeify: push view indexes through the tensor graph.
//!
//! The pass starts from one BUFFERIZE per root (built by
//! [`IndexingCtx::bufferize`]) whose body is the view index of the root at
//! fresh Loop ranges, and rewrites top-down with one rule on view INDEX
//! nodes. Each application moves the index one tensor op down:
//!
//! | tensor op under the index | result |
//! |---|---|
//! | realized node `t` | `INDEX(BUFFERIZE(INDEX(t, r…) pushed, r…), idx…)`, one BUFFERIZE per `t` |
//! | `BUFFER` | `LOAD(INDEX(buffer, Σ idx_k·stride_k [, gate]))` |
//! | `CONST` (rank 0) | the constant |
//! | `RESHAPE` | coordinates of the source from the linear offset (div/mod) |
//! | `PERMUTE(p)` | `idx'[p[k]] = idx[k]` |
//! | `EXPAND` | broadcast axes (source size 1) read coordinate 0 |
//! | `PAD` | `WHERE(valid, INDEX(src, idx − before, gate ∧ valid), 0)` |
//! | `SHRINK` | `idx + begin` |
//! | `FLIP` | `(n − 1) − idx` on flipped axes |
//! | `REDUCE_AXIS(op, axes)` | `REDUCE(INDEX(src, idx with fresh Reduce ranges on axes), ranges…)` |
//! | ALU, CAST, BITCAST | the same op over the indexed operands |
//! | CONTIGUOUS, DETACH, NOOP | the indexed operand |
//!
//! Correctness: each row is the definition of the tensor op read at one
//! coordinate. The PAD gate travels down to the loads, so a padded
//! coordinate never reads memory; the WHERE supplies the pad value 0.
//! Fresh ranges are memoized with the rewritten node, and the BUFFERIZE of
//! a realized node is memoized per node, so every use shares one kernel.

use super::{fresh_axis, index_simplify as ix, linearize, ptr_index, unravel, view_index};
use crate::dtype::AddrSpace;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::schedule::ScheduleError;
use crate::uop::tensor_shape;
use crate::uop::{Arg, AxisType, Op, OpGroup, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// State of the indexing pass.
#[derive(Default)]
pub struct IndexingCtx {
    /// Tensor nodes that are materialized (see [`super::realize`]).
    pub realize: HashSet<u64>,
    /// Realized nodes whose buffer may be inlined again (heuristic ones).
    pub removable: HashSet<u64>,
    /// Output buffer id of each root.
    pub outputs: HashMap<u64, u64>,
    /// The BUFFERIZE built for each realized node.
    pub buffers: HashMap<u64, Arc<UOp>>,
    /// Next fresh axis id.
    pub next_axis: usize,
}

impl IndexingCtx {
    /// The BUFFERIZE materializing the realized node `t` (built once).
    pub fn bufferize(&mut self, t: &Arc<UOp>) -> Result<Arc<UOp>, ScheduleError> {
        if let Some(b) = self.buffers.get(&t.id()) {
            return Ok(b.clone());
        }
        let shape = tensor_shape(t)?;
        let axes: Vec<Arc<UOp>> = shape
            .iter()
            .map(|&d| fresh_axis(d, &mut self.next_axis, AxisType::Loop))
            .collect();
        let body = push(t, &axes, None, self)?;
        let mut src: Srcs = Srcs::new();
        src.push(body);
        src.extend(axes);
        let arg = Arg::Bufferize {
            addr: AddrSpace::Global,
            output: self.outputs.get(&t.id()).copied(),
            removable: self.removable.contains(&t.id()),
        };
        let b = UOp::new(Op::Bufferize, t.dtype(), src, arg);
        self.buffers.insert(t.id(), b.clone());
        Ok(b)
    }
}

/// The indexing rule set.
pub fn indexing_rules() -> PatternMatcher<IndexingCtx> {
    patterns! {
        @context IndexingCtx;
        @name "rangeify-indexing";
        n @ Index(..) if super::is_view_index(n) => try index_one_step(n, ctx),
    }
}

/// One step of the table above for the view index `n`; an error (an op
/// with no rule, an ill-shaped node) fails the rule.
fn index_one_step(n: &Arc<UOp>, ctx: &mut IndexingCtx) -> Result<Option<Arc<UOp>>, ScheduleError> {
    let (t, idx, gate) = super::split_view_index(n);
    if t.op() == Op::Bufferize {
        return Ok(None);
    }
    if ctx.realize.contains(&t.id()) {
        ctx.bufferize(t).map(|b| Some(view_index(&b, idx, gate)))
    } else {
        push(t, idx, gate, ctx).map(Some)
    }
}

fn unsupported(t: &Arc<UOp>, reason: &str) -> ScheduleError {
    ScheduleError::Unsupported {
        op: t.op().dump_name(),
        shape: tensor_shape(t).map(|s| s.to_vec()).unwrap_or_default(),
        reason: reason.to_string(),
    }
}

/// Moves the view index `INDEX(t, idx [, gate])` one op down (see the table
/// in the module docs).
fn push(
    t: &Arc<UOp>,
    idx: &[Arc<UOp>],
    gate: Option<&Arc<UOp>>,
    ctx: &mut IndexingCtx,
) -> Result<Arc<UOp>, ScheduleError> {
    let src_shape = |i: usize| tensor_shape(t.s(i));
    let out = match (t.op(), t.arg()) {
        (Op::Buffer, Arg::Buffer { size, .. }) => {
            ptr_index(t, &linearize(idx, &[*size]), gate).load()
        }
        (Op::Const, _) if t.src().is_empty() => t.clone(),
        (Op::Reshape, Arg::Shape(new)) => {
            let lin = linearize(idx, new);
            view_index(t.s(0), &unravel(&lin, &src_shape(0)?), gate)
        }
        (Op::Permute, Arg::Axes(perm)) => {
            let mut src_idx = vec![UOp::index(0); idx.len()];
            for (k, &p) in perm.iter().enumerate() {
                src_idx[p] = idx[k].clone();
            }
            view_index(t.s(0), &src_idx, gate)
        }
        (Op::Expand, Arg::Shape(_)) => {
            let s = src_shape(0)?;
            let src_idx: Vec<_> = idx
                .iter()
                .zip(&s)
                .map(|(i, &d)| if d == 1 { UOp::index(0) } else { i.clone() })
                .collect();
            view_index(t.s(0), &src_idx, gate)
        }
        (Op::Pad, Arg::Pairs(pads)) => {
            let s = src_shape(0)?;
            let mut valid: Option<Arc<UOp>> = None;
            let mut src_idx = Vec::with_capacity(idx.len());
            for ((i, &(before, after)), &d) in idx.iter().zip(pads).zip(&s) {
                if before > 0 {
                    valid = Some(ix::and(valid.as_ref(), &ix::lt(&UOp::index(before - 1), i)));
                }
                if after > 0 {
                    valid = Some(ix::and(
                        valid.as_ref(),
                        &ix::lt(i, &UOp::index(before + d as i64)),
                    ));
                }
                src_idx.push(ix::add(i, &UOp::index(-before)));
            }
            match valid {
                None => view_index(t.s(0), &src_idx, gate),
                Some(v) => {
                    let gate = ix::and(gate, &v);
                    let inner = view_index(t.s(0), &src_idx, Some(&gate));
                    v.where_(&inner, &UOp::zero(t.dtype()))
                }
            }
        }
        (Op::Shrink, Arg::Pairs(bounds)) => {
            let src_idx: Vec<_> = idx
                .iter()
                .zip(bounds)
                .map(|(i, &(begin, _))| ix::add(i, &UOp::index(begin)))
                .collect();
            view_index(t.s(0), &src_idx, gate)
        }
        (Op::Flip, Arg::Axes(axes)) => {
            let s = src_shape(0)?;
            let src_idx: Vec<_> = idx
                .iter()
                .enumerate()
                .map(|(k, i)| {
                    if axes.contains(&k) {
                        ix::add(&ix::mul_c(i, -1), &UOp::index(s[k] as i64 - 1))
                    } else {
                        i.clone()
                    }
                })
                .collect();
            view_index(t.s(0), &src_idx, gate)
        }
        (Op::ReduceAxis, Arg::ReduceAxis(op, axes)) => {
            let s = src_shape(0)?;
            let mut src_idx = idx.to_vec();
            let mut ranges = Vec::new();
            for &a in axes.iter() {
                let r = fresh_axis(s[a], &mut ctx.next_axis, AxisType::Reduce);
                if r.op() == Op::Range {
                    ranges.push(r.clone());
                }
                src_idx[a] = r;
            }
            let inner = view_index(t.s(0), &src_idx, gate);
            if ranges.is_empty() {
                inner
            } else {
                inner.reduce(*op, &ranges)
            }
        }
        (Op::Contiguous | Op::Detach | Op::Noop, _) => view_index(t.s(0), idx, gate),
        (op, _)
            if matches!(
                op.group(),
                OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary | OpGroup::Cast
            ) =>
        {
            let src: Srcs = t.src().iter().map(|s| view_index(s, idx, gate)).collect();
            t.with_sources(src)
        }
        _ => return Err(unsupported(t, "no rangeify rule for this tensor op")),
    };
    Ok(out)
}
