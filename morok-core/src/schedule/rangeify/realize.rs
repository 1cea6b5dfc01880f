//! Realization: which tensor nodes become buffers (kernel boundaries).
//!
//! Always realized: every root that is not already a view of an input
//! buffer, and every CONTIGUOUS. Elementwise and movement ops always fuse
//! into their consumer. A REDUCE_AXIS fuses too, unless fusing would
//! recompute it:
//!
//! - *expanded*: between the reduction and the realized node that consumes
//!   it lies an EXPAND that broadcasts (a size-1 axis becomes larger), e.g.
//!   `x - max(x)` in softmax. Fused, the reduction would run once per
//!   element of the larger iteration space (O(n²) for softmax);
//! - *shared*: it is reachable from two different realized nodes, which
//!   would each recompute it.
//!
//! Such a reduction is realized as *removable*: if reduce simplification
//! later turns it into a closed form (an `arange` counter), buffer removal
//! inlines it again.
//!
//! *Epilogues* ([`move_to_epilogues`]): when the reduction's only consumer
//! is an elementwise op, and that op's only consumer is another, and so
//! on, the last op of that chain is realized in its place
//! (`relu(x @ w1 + b1)` before the next matmul broadcasts it; the logits
//! `h @ w2 + b2` that softmax's kernels share). The reduction's kernel
//! then applies the ops once per output element before storing, where
//! each consumer would otherwise recompute them once per element it reads
//! (ten times per hidden unit for an MLP's 10 classes). The reduction
//! itself is still computed once, in that kernel.

use crate::schedule::ScheduleError;
use crate::uop::tensor_shape;
use crate::uop::{Op, OpGroup, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The realization decision for a tensor graph.
#[derive(Debug, Default)]
pub struct Realization {
    /// Every realized node (roots, CONTIGUOUS, chosen reductions).
    pub realize: HashSet<u64>,
    /// The subset chosen by the heuristic (may be inlined again).
    pub removable: HashSet<u64>,
}

/// Which realized nodes reach a node through unrealized ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    None,
    One(u64),
    Many,
}

impl Reach {
    fn merge(self, other: Reach) -> Reach {
        match (self, other) {
            (Reach::None, x) | (x, Reach::None) => x,
            (Reach::One(a), Reach::One(b)) if a == b => Reach::One(a),
            _ => Reach::Many,
        }
    }
}

/// True for an EXPAND that makes some axis larger.
fn broadcasts(n: &Arc<UOp>) -> Result<bool, ScheduleError> {
    if n.op() != Op::Expand {
        return Ok(false);
    }
    Ok(tensor_shape(n.s(0))? != tensor_shape(n)?)
}

/// Decides realization for the graph under `sink` whose operands are the
/// roots to compute (`roots` lists those that need a kernel).
pub fn realization(sink: &Arc<UOp>, roots: &[Arc<UOp>]) -> Result<Realization, ScheduleError> {
    let mut out = Realization::default();
    out.realize.extend(roots.iter().map(|r| r.id()));
    let mut reach: HashMap<u64, Reach> = HashMap::new();
    let mut expanded: HashSet<u64> = HashSet::new();
    for n in sink.toposort().iter().rev() {
        if n.op() == Op::Sink {
            continue;
        }
        let (mut r, mut e) = (
            reach.get(&n.id()).copied().unwrap_or(Reach::None),
            expanded.contains(&n.id()),
        );
        if n.op() == Op::Contiguous {
            out.realize.insert(n.id());
        }
        if n.op() == Op::ReduceAxis && !out.realize.contains(&n.id()) && (e || r == Reach::Many) {
            out.realize.insert(n.id());
            out.removable.insert(n.id());
        }
        if out.realize.contains(&n.id()) {
            (r, e) = (Reach::One(n.id()), false);
        }
        e |= broadcasts(n)?;
        for s in n.src() {
            let prev = reach.get(&s.id()).copied().unwrap_or(Reach::None);
            reach.insert(s.id(), prev.merge(r));
            if e {
                expanded.insert(s.id());
            }
        }
    }
    move_to_epilogues(sink, &mut out);
    Ok(out)
}

/// Moves the realization of each heuristically realized reduction up its
/// chain of elementwise consumers (see the module docs): from the
/// reduction, while the node has exactly one consumer, that consumer is
/// elementwise (unary, binary, ternary or a cast: same shape as its
/// operands) or a RESHAPE or PERMUTE (same elements, a matmul's
/// `keepdim` axis dropped) and not realized already, step to it; realize
/// the last elementwise node reached instead of the reduction. Every node of the chain had one
/// consumer, so the chain's values are needed only by the node's readers:
/// nothing is computed twice, and the chain's other operands (a bias)
/// join the reduction's kernel. A walk over the toposort to count
/// consumers, which a rewrite cannot see.
fn move_to_epilogues(sink: &Arc<UOp>, out: &mut Realization) {
    let nodes = sink.toposort();
    let mut users: HashMap<u64, Vec<&Arc<UOp>>> = HashMap::new();
    for n in &nodes {
        let mut seen = HashSet::new();
        for s in n.src() {
            if seen.insert(s.id()) {
                users.entry(s.id()).or_default().push(n);
            }
        }
    }
    let elementwise = |n: &UOp| {
        matches!(
            n.op().group(),
            OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary | OpGroup::Cast
        )
    };
    for r in nodes.iter().filter(|n| n.op() == Op::ReduceAxis) {
        if !out.removable.contains(&r.id()) {
            continue;
        }
        let (mut at, mut top) = (r, r);
        while let Some([user]) = users.get(&at.id()).map(Vec::as_slice) {
            let reshapes = matches!(user.op(), Op::Reshape | Op::Permute);
            if !(elementwise(user) || reshapes) || out.realize.contains(&user.id()) {
                break;
            }
            at = user;
            if !reshapes {
                top = user;
            }
        }
        if !Arc::ptr_eq(top, r) {
            out.realize.remove(&r.id());
            out.removable.remove(&r.id());
            out.realize.insert(top.id());
            out.removable.insert(top.id());
        }
    }
}
