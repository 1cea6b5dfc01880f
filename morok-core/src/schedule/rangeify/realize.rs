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

use crate::schedule::ScheduleError;
use crate::uop::tensor_shape;
use crate::uop::{Op, UOp};
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
    Ok(out)
}
