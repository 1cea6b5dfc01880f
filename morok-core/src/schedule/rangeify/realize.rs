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
//! Where an expanded reduction is followed by elementwise ops before the
//! broadcast (a layer's bias and activation after its matmul), the last
//! of them is realized instead (see `reduced_operand`): the chain then
//! runs once per element in the reduction's kernel.
//!
//! A reduction (or its elementwise chain) under a PAD is realized below
//! the PAD: fused, the padded shape's border positions run the whole
//! reduction loop with every load gated off, and the gate on each load
//! keeps the loop scalar (a convolution's 1×1 layer computed into the
//! next layer's padded input ran at a tenth of the FMA rate of the same
//! product without the border). The PAD then copies the realized values
//! into its own, cheap, elementwise kernel or into its consumer's.
//!
//! Such a reduction (or chain) is realized as *removable*: if reduce simplification
//! later turns it into a closed form (an `arange` counter), buffer removal
//! inlines it again; if it reduces a short row read at its consumer's
//! outer loops, row fusion ([`crate::schedule::row_fusion`]) keeps it in
//! the consumer's kernel.

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

/// True for the ops an elementwise chain consists of (ALU ops and casts).
fn elementwise(n: &UOp) -> bool {
    matches!(
        n.op().group(),
        OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary | OpGroup::Cast
    )
}

/// The *epilogue* of a reduction that an EXPAND broadcasts (or a PAD
/// pads): below `s` (the EXPAND's or PAD's source) through RESHAPE and
/// PERMUTE, an elementwise node `m` not yet realized that reaches an
/// unrealized REDUCE_AXIS through elementwise ops, RESHAPE and PERMUTE
/// only, or that REDUCE_AXIS itself when nothing lies between. Realizing `m`
/// instead of the reduction puts the chain after the reduction (a
/// matmul's bias and activation) into the reduction's kernel, computed
/// once per element of the reduced shape, instead of into the consumer's
/// kernel, where the broadcast repeats it for every element of the larger
/// shape. The path keeps the element count (no broadcast, no reduce on
/// it), so the buffer holds as many elements as the reduction's would.
fn reduced_operand(s: &Arc<UOp>, realized: &HashSet<u64>) -> Option<Arc<UOp>> {
    let reshapes = |n: &UOp| matches!(n.op(), Op::Reshape | Op::Permute);
    let mut m = s.clone();
    while reshapes(&m) {
        m = m.s(0).clone();
    }
    if realized.contains(&m.id()) {
        return None;
    }
    if m.op() == Op::ReduceAxis {
        return Some(m);
    }
    if !elementwise(&m) {
        return None;
    }
    let mut stack: Vec<Arc<UOp>> = m.src().to_vec();
    let mut seen: HashSet<u64> = HashSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n.id()) || realized.contains(&n.id()) {
            continue;
        }
        if n.op() == Op::ReduceAxis {
            return Some(m);
        }
        if elementwise(&n) || reshapes(&n) {
            stack.extend(n.src().iter().cloned());
        }
    }
    None
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
        if n.op() == Op::Pad && !out.realize.contains(&n.id()) {
            if let Some(m) = reduced_operand(n.s(0), &out.realize) {
                out.realize.insert(m.id());
                out.removable.insert(m.id());
            }
        }
        if broadcasts(n)? {
            if let Some(m) = reduced_operand(n.s(0), &out.realize) {
                out.realize.insert(m.id());
                out.removable.insert(m.id());
            }
            e = true;
        }
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
