//! What a memory access of a kernel AST addresses.

use crate::uop::{Arg, Op, UOp};
use std::collections::HashSet;
use std::sync::Arc;

/// Whether an `INDEX` addresses a global buffer (looking through `AFTER`
/// to the `DEFINE_GLOBAL`), as opposed to a register.
pub fn indexes_global(index: &Arc<UOp>) -> bool {
    index_base(index).op() == Op::DefineGlobal
}

/// Whether an `INDEX` addresses a block's shared memory (`DEFINE_LOCAL`,
/// possibly behind `AFTER`).
pub fn indexes_shared(index: &Arc<UOp>) -> bool {
    index_base(index).op() == Op::DefineLocal
}

/// The buffer an `INDEX` addresses, looking through `AFTER`.
fn index_base(index: &Arc<UOp>) -> &Arc<UOp> {
    let mut base = index.s(0);
    while base.op() == Op::After {
        base = base.s(0);
    }
    base
}

/// True when some global buffer of `ast` is loaded at another index than
/// the one it is stored at: then an iteration of the output ranges could
/// read what another writes, and they cannot run as parallel threads.
pub fn reads_what_others_write(ast: &Arc<UOp>) -> bool {
    let nodes = ast.toposort();
    let slot = |index: &Arc<UOp>| match index.s(0).arg() {
        Arg::Int(s) if index.s(0).op() == Op::DefineGlobal => Some(*s),
        _ => None,
    };
    let stored: Vec<(i64, u64)> = nodes
        .iter()
        .filter(|n| n.op() == Op::Store)
        .filter_map(|n| Some((slot(n.s(0))?, n.s(0).s(1).id())))
        .collect();
    let written: HashSet<i64> = stored.iter().map(|(s, _)| *s).collect();
    nodes.iter().filter(|n| n.op() == Op::Load).any(|n| {
        slot(n.s(0))
            .is_some_and(|s| written.contains(&s) && !stored.contains(&(s, n.s(0).s(1).id())))
    })
}
