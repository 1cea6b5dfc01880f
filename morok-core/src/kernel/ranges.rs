//! Ranges of a kernel AST: their ids and sizes, and the range surgery
//! (replace one range by an expression of new ones) that the optimizer's
//! splits and the scheduler's range passes are built from.

use crate::uop::{Arg, AxisType, Op, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One more than the largest `axis_id` of the `RANGE`s in `g` (0 when
/// there are none): an id no range of `g` has.
pub fn next_axis_id(g: &Arc<UOp>) -> usize {
    g.toposort()
        .iter()
        .filter_map(|n| match n.arg() {
            crate::uop::Arg::Range { axis_id, .. } if n.op() == Op::Range => Some(axis_id + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}
/// The constant trip count of a `RANGE`, if it has one.
pub fn range_size(r: &UOp) -> Option<i64> {
    r.range_size()
}
/// The `axis_id` of a range (0 for other nodes).
pub fn axis_id(r: &UOp) -> usize {
    match r.arg() {
        Arg::Range { axis_id, .. } => *axis_id,
        _ => 0,
    }
}
/// Nesting key of a range inside the range list of an `END` or `REDUCE`:
/// thread ranges outermost (the host splits the outermost loop across
/// cores), then the other output ranges, upcast ranges innermost among
/// the outputs, then reduce and unrolled reduce ranges.
fn nesting_key(t: AxisType) -> u8 {
    match t {
        AxisType::Thread => 0,
        AxisType::Upcast => 2,
        AxisType::Reduce | AxisType::GroupReduce => 3,
        AxisType::Unroll => 4,
        _ => 1,
    }
}
/// Rebuilds `ast` with range `old` replaced: as a value by `value`, in
/// `END`/`REDUCE` range lists by `loops` (then each list is stably
/// re-sorted by nesting key). `post` may rewrite every rebuilt node (it
/// sees the node with its new operands).
///
/// A hand-written walk rather than a rewrite rule: the same `RANGE` node
/// plays two roles (a value in index arithmetic, a loop in a range list)
/// that must be replaced differently, which a node-for-node substitution
/// cannot express. It is iterative (toposort order).
pub fn replace_range(
    ast: &Arc<UOp>,
    old: &Arc<UOp>,
    value: &Arc<UOp>,
    loops: &[Arc<UOp>],
    mut post: impl FnMut(Arc<UOp>) -> Arc<UOp>,
) -> Arc<UOp> {
    let mut done: HashMap<u64, Arc<UOp>> = HashMap::new();
    for n in ast.toposort() {
        let new = if Arc::ptr_eq(&n, old) {
            value.clone()
        } else if matches!(n.op(), Op::End | Op::Reduce) {
            let mut list: Vec<Arc<UOp>> = Vec::new();
            for r in &n.src()[1..] {
                if Arc::ptr_eq(r, old) {
                    list.extend(loops.iter().cloned());
                } else {
                    list.push(done[&r.id()].clone());
                }
            }
            list.sort_by_key(|r| r.axis_type().map_or(1, nesting_key));
            let mut src: Srcs = Srcs::new();
            src.push(done[&n.s(0).id()].clone());
            src.extend(list);
            post(n.with_sources(src))
        } else {
            let src: Srcs = n.src().iter().map(|s| done[&s.id()].clone()).collect();
            post(n.with_sources(src))
        };
        done.insert(n.id(), new);
    }
    done[&ast.id()].clone()
}
/// True if `root` uses `range` (as a value or in a range list).
pub fn uses_range(root: &Arc<UOp>, range: &Arc<UOp>) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if Arc::ptr_eq(&n, range) {
            return true;
        }
        if seen.insert(n.id()) {
            stack.extend(n.src().iter().cloned());
        }
    }
    false
}

/// The ranges the value of `REDUCE` node `reduce` varies with besides its
/// own: the `RANGE`s under its value that neither it nor a `REDUCE` inside
/// its value loops over (the loops it runs inside of), by id.
pub fn outer_ranges_of_reduce(reduce: &Arc<UOp>) -> Vec<Arc<UOp>> {
    let nodes = reduce.toposort();
    let closed: HashSet<u64> = nodes
        .iter()
        .filter(|n| n.op() == Op::Reduce)
        .flat_map(|n| n.src()[1..].iter().map(|r| r.id()))
        .collect();
    nodes
        .into_iter()
        .filter(|n| n.op() == Op::Range && !closed.contains(&n.id()))
        .collect()
}
