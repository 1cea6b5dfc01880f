//! Constant folding: an ALU op whose operands are all constants becomes
//! the constant [`exec_alu`] computes (never folded when the C result
//! would be undefined, see [`eval`](super::eval)).

use super::compute_dtype;
use super::eval::exec_alu;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use smallvec::SmallVec;
use std::sync::Arc;

/// The ALU ops that constant folding evaluates: every unary, binary and
/// ternary op except `Threefry`, whose bits belong to the device.
pub fn foldable_ops() -> impl Iterator<Item = Op> {
    Op::ALL.iter().copied().filter(|op| {
        matches!(op.group(), OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary)
            && *op != Op::Threefry
    })
}

/// Constant folding, one rule per ALU op: `op(c1, ..., cn) → c`.
pub fn fold() -> PatternMatcher {
    let mut pm = PatternMatcher::new("fold");
    for op in foldable_ops() {
        pm.rule(&[op], |n, _| fold_node(n));
    }
    pm
}

/// Folds an ALU node whose operands are all CONSTs (a vector CONST is one
/// value broadcast to every lane, so the scalar result broadcasts too).
fn fold_node(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let args: SmallVec<[ConstValue; 3]> =
        n.src().iter().map(|s| s.const_value()).collect::<Option<_>>()?;
    let v = exec_alu(n.op(), compute_dtype(n), &args)?;
    Some(UOp::const_(n.dtype(), v))
}
