//! Live ranges: the `RANGE`s a node's value varies with.
//!
//! A `RANGE` is live in itself and in its users; `END(x, r...)` stops
//! `r...` from being live past it. The linearizer places nodes by their
//! live ranges, reduce lowering finds a reduction's outer loops with
//! them, and the buffer-access analysis finds accesses inside loops that
//! never run. (A module of its own so that those stages do not import
//! one another.)

use crate::uop::{Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The live ranges of `root` (sorted by id), memoized in `memo`.
pub fn live_ranges(root: &Arc<UOp>, memo: &mut HashMap<u64, Vec<Arc<UOp>>>) -> Vec<Arc<UOp>> {
    if let Some(v) = memo.get(&root.id()) {
        return v.clone();
    }
    for n in root.toposort() {
        if memo.contains_key(&n.id()) {
            continue;
        }
        let mut set: Vec<Arc<UOp>> = n
            .src()
            .iter()
            .flat_map(|s| memo[&s.id()].iter().cloned())
            .collect();
        match n.op() {
            Op::Range => set.push(n.clone()),
            Op::End => set.retain(|r| !n.src()[1..].iter().any(|c| Arc::ptr_eq(c, r))),
            _ => {}
        }
        set.sort_by_key(|r| r.id());
        set.dedup_by_key(|r| r.id());
        memo.insert(n.id(), set);
    }
    memo[&root.id()].clone()
}
