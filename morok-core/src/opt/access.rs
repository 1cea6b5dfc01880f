//! How a kernel's global buffers are accessed: their index expressions and
//! the stride of an index along a range (the heuristics' view of memory).

use crate::uop::{Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The index expressions of every global buffer access of the kernel.
pub fn buffer_indices(ast: &Arc<UOp>) -> Vec<Arc<UOp>> {
    ast.toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Index && n.s(0).op() == Op::DefineGlobal)
        .map(|n| n.s(1).clone())
        .collect()
}

/// `idx[r := 1] - idx[r := 0]` with every other range at 0, folded by the
/// symbolic rules; `None` when it does not fold to a constant (loaded
/// data in the index).
pub fn stride(idx: &Arc<UOp>, r: &Arc<UOp>, ranges: &[Arc<UOp>]) -> Option<i64> {
    let at = |v: i64| -> Option<i64> {
        let map: HashMap<u64, Arc<UOp>> = ranges
            .iter()
            .map(|x| (x.id(), UOp::index(if Arc::ptr_eq(x, r) { v } else { 0 })))
            .collect();
        let folded = crate::symbolic::simplify(&idx.substitute(&map)).ok()?;
        folded.const_value().and_then(|c| c.as_i64())
    };
    Some(at(1)? - at(0)?)
}
