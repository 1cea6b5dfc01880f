//! Row fusion: a row reduction stays in the kernel that consumes it.
//!
//! Softmax, log-softmax and layernorm broadcast a per-row reduction back
//! over the row (`x - max(x)`), so realization stores each reduction in a
//! buffer of its own (see [`super::rangeify::realize`]): three kernels that
//! each stream the input from memory. When the reduced axis is short enough
//! for a row to stay cached ([`MAX_FUSED_ROW`] elements), it is cheaper to
//! recompute nothing and store nothing: the consumer's kernel loops over a
//! row, computes the reduction into an accumulator, and reuses it for every
//! element of that row (the row comes from memory once; the later passes
//! over it hit the cache).
//!
//! A removable BUFFERIZE `B = BUFFERIZE(v, a…)` whose body reduces (every
//! REDUCE in `v` over at most [`MAX_FUSED_ROW`] elements) is *fused* when
//!
//! - every view index that reads `B` uses as coordinates distinct Loop
//!   ranges that are the outermost ranges of the reading BUFFERIZE (its
//!   leading axes, size-1 axes skipped). The reduction then depends only
//!   on outer loops of its consumer, and lowering places it in the deepest
//!   loop it depends on: once per row, never once per element;
//! - all of its readers end up in one kernel (the *host*: the unique
//!   non-fused BUFFERIZE reached through fused readers), so fusing never
//!   computes a reduction in two kernels.
//!
//! The decision is made once on the whole graph ([`RowFusion::analyze`],
//! a walk over the BUFFERIZE nodes: sharing is a property of the whole
//! graph, not of one node). The rules then mark each fused BUFFERIZE with
//! the register address space (its value lives in the consumer's registers)
//! and replace every view index of a marked BUFFERIZE by its body, with its
//! axes substituted by the index's coordinates (and the index's gate added
//! to the body's loads), exactly as buffer removal inlines a partial
//! contiguous. Values are unchanged: the consumer evaluates the same
//! expression the buffer held at the coordinates it reads.

use super::rangeify::buffer_removal::{bufferize_target, inline_read};
use super::rangeify::{axis_size, is_view_index, split_view_index};
use crate::dtype::AddrSpace;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Arg, AxisType, Op, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The longest reduction (elements, the product of a REDUCE's range sizes)
/// that is fused into its consumer: 8192 f32 are 32 KiB, a row that stays
/// in L1/L2 between the passes over it.
pub const MAX_FUSED_ROW: usize = 8192;

/// The fused BUFFERIZE nodes of a graph (by id, before the rewrite).
#[derive(Debug, Default)]
pub struct RowFusion {
    fused: HashSet<u64>,
}

/// The nodes of a BUFFERIZE's body, not entering other BUFFERIZEs.
fn body_nodes(b: &Arc<UOp>) -> Vec<Arc<UOp>> {
    b.s(0).toposort_until(|n| n.op() == Op::Bufferize)
}

/// True if `b` may be fused at all: a removable intermediate (not a user
/// output, still a global buffer) whose body reduces, each reduction over
/// at most [`MAX_FUSED_ROW`] elements.
fn is_candidate(b: &Arc<UOp>) -> bool {
    let fusable_arg = matches!(
        b.arg(),
        Arg::Bufferize {
            addr: AddrSpace::Global,
            output: None,
            removable: true,
        }
    );
    if !fusable_arg {
        return false;
    }
    let reduces: Vec<Arc<UOp>> = body_nodes(b)
        .into_iter()
        .filter(|n| n.op() == Op::Reduce)
        .collect();
    !reduces.is_empty()
        && reduces.iter().all(|r| {
            r.src()[1..]
                .iter()
                .try_fold(1usize, |acc, a| acc.checked_mul(axis_size(a)))
                .is_some_and(|n| n <= MAX_FUSED_ROW)
        })
}

/// True if the view index `n` inside `consumer` reads with coordinates that
/// are distinct Loop ranges forming the consumer's leading (outermost) axes.
fn reads_outer_rows(n: &Arc<UOp>, consumer: &Arc<UOp>) -> bool {
    let (_, idx, _) = split_view_index(n);
    let coords: Vec<&Arc<UOp>> = idx.iter().filter(|i| i.op() != Op::Const).collect();
    let outer: Vec<&Arc<UOp>> = consumer.src()[1..]
        .iter()
        .filter(|a| a.op() == Op::Range)
        .take(coords.len())
        .collect();
    let is_loop = |i: &Arc<UOp>| matches!(i.arg(), Arg::Range { axis_type, .. } if *axis_type == AxisType::Loop);
    let distinct = coords
        .iter()
        .enumerate()
        .all(|(k, c)| !coords[..k].iter().any(|d| Arc::ptr_eq(d, c)));
    outer.len() == coords.len()
        && distinct
        && coords
            .iter()
            .all(|c| c.op() == Op::Range && is_loop(c) && outer.iter().any(|o| Arc::ptr_eq(o, c)))
}

impl RowFusion {
    /// Decides which BUFFERIZE nodes of `graph` are fused (see the module
    /// docs). A hand-written walk: whether a buffer is shared between
    /// kernels is known only from all of its readers together.
    pub fn analyze(graph: &Arc<UOp>) -> RowFusion {
        let kernels: Vec<Arc<UOp>> = graph
            .toposort()
            .into_iter()
            .filter(|n| n.op() == Op::Bufferize)
            .collect();
        // For each BUFFERIZE: the BUFFERIZEs reading it, and whether every
        // one of those reads keeps to the reader's outer rows.
        let mut readers: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut rows_only: HashMap<u64, bool> = HashMap::new();
        for k in &kernels {
            for n in body_nodes(k) {
                if let Some(b) = bufferize_target(&n) {
                    readers.entry(b.id()).or_default().push(k.id());
                    let ok = rows_only.entry(b.id()).or_insert(true);
                    *ok &= reads_outer_rows(&n, k);
                }
            }
        }
        let mut out = RowFusion::default();
        // The kernel each BUFFERIZE's value ends up in; consumers come
        // later in topological order, so walk it backwards.
        let mut host: HashMap<u64, u64> = HashMap::new();
        for k in kernels.iter().rev() {
            let hosts: HashSet<u64> = readers
                .get(&k.id())
                .into_iter()
                .flatten()
                .map(|r| host.get(r).copied().unwrap_or(*r))
                .collect();
            let fuse = is_candidate(k)
                && rows_only.get(&k.id()).copied().unwrap_or(false)
                && hosts.len() == 1;
            if fuse {
                out.fused.insert(k.id());
                host.insert(k.id(), *hosts.iter().next().unwrap_or(&k.id()));
            } else {
                host.insert(k.id(), k.id());
            }
        }
        out
    }

    /// True if nothing is fused.
    pub fn is_empty(&self) -> bool {
        self.fused.is_empty()
    }
}

/// The row fusion rules (top-down, with the [`RowFusion`] decision):
/// a fused BUFFERIZE is marked `Reg`, and a view index of a `Reg`
/// BUFFERIZE becomes the BUFFERIZE's body at the index's coordinates.
pub fn row_fusion_rules() -> PatternMatcher<RowFusion> {
    patterns! {
        @context RowFusion;
        @name "row-fusion";
        b @ Bufferize(..) if ctx.fused.contains(&b.id()) ~> mark_register(b),
        n @ Index(b @ Bufferize(..), ..) if is_view_index(n) && is_register(b) ~> inline_read(n, b),
    }
}

/// `b` with its address space set to registers.
fn mark_register(b: &Arc<UOp>) -> Arc<UOp> {
    let arg = match b.arg() {
        Arg::Bufferize {
            output, removable, ..
        } => Arg::Bufferize {
            addr: AddrSpace::Reg,
            output: *output,
            removable: *removable,
        },
        other => other.clone(),
    };
    b.with_arg(arg)
}

/// True for a BUFFERIZE marked by [`mark_register`].
fn is_register(b: &Arc<UOp>) -> bool {
    matches!(
        b.arg(),
        Arg::Bufferize {
            addr: AddrSpace::Reg,
            ..
        }
    )
}
