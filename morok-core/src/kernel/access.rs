//! What a memory access of a kernel AST addresses.

use crate::uop::{Op, UOp};
use std::sync::Arc;

/// Whether an `INDEX` addresses a global buffer (looking through `AFTER`
/// to the `DEFINE_GLOBAL`), as opposed to a register.
pub fn indexes_global(index: &Arc<UOp>) -> bool {
    let mut base = index.s(0);
    while base.op() == Op::After {
        base = base.s(0);
    }
    base.op() == Op::DefineGlobal
}
