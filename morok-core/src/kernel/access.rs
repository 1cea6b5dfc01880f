//! What a memory access of a kernel AST addresses.

use crate::uop::{Op, UOp};
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
