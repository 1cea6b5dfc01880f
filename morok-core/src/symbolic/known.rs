//! Rules decided by value bounds (see [`bounds`](super::bounds)): a node
//! whose bounds pin its value down, and ops that bounds make redundant.

use super::bounds::int_bounds;
use super::{int_node, is_int, is_int_or_bool};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use std::sync::Arc;

/// The single value of an integer or bool ALU op, cast or variable whose
/// bounds are one point (this decides comparisons, quotients of bounded
/// values, variables declared over a single value, ...).
fn pinned(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let computes = matches!(
        n.op().group(),
        OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
    ) || matches!(n.op(), Op::Cast | Op::DefineVar);
    if !computes || !is_int_or_bool(n) || n.dtype().is_vector() {
        return None;
    }
    let (lo, hi) = int_bounds(n)?;
    (lo == hi).then(|| int_node(n.dtype(), lo))
}

/// True if every value of `a` is at least every value of `b` (integers).
fn dominates(a: &Arc<UOp>, b: &Arc<UOp>) -> bool {
    match (int_bounds(a), int_bounds(b)) {
        (Some(a), Some(b)) => a.0 >= b.1,
        _ => false,
    }
}

/// True if `x` is an integer that is never zero.
fn nonzero(x: &Arc<UOp>) -> bool {
    is_int(x) && int_bounds(x).is_some_and(|(lo, hi)| lo > 0 || hi < 0)
}

/// True if `m` is `2^k - 1` and `0 <= x <= m`.
fn masks_nothing(x: &Arc<UOp>, m: ConstValue) -> bool {
    let (Some(mask), Some((lo, hi))) = (m.as_i128(), int_bounds(x)) else {
        return false;
    };
    is_int(x) && mask >= 0 && (mask + 1) & mask == 0 && lo >= 0 && hi <= mask
}

/// Bounds-driven rules.
pub fn known() -> PatternMatcher {
    patterns! {
        @name "known";
        n => pinned(n),
        // max(x, y) → x when every x is at least every y, min likewise
        // (integers).
        Max[x, y] if dominates(x, y) ~> x,
        Min[x, y] if dominates(y, x) ~> x,
        // |x| → x when x ≥ 0, and → -x when x ≤ 0 (wrapping -MIN = MIN = |MIN|).
        Abs(x) => {
            let (lo, hi) = int_bounds(x).filter(|_| is_int(x))?;
            if lo >= 0 {
                Some(x.clone())
            } else if hi <= 0 {
                Some(x.un(Op::Neg))
            } else {
                None
            }
        },
        // x & (2^k - 1) → x when 0 ≤ x < 2^k: the mask keeps every bit of x.
        And[x, @const(m)] if masks_nothing(x, m) ~> x,
        // x // x → 1 and x % x → 0 when x is never zero (MIN / MIN = 1 too).
        n @ Idiv(x, x) if nonzero(x) ~> int_node(n.dtype(), 1),
        n @ Mod(x, x) if nonzero(x) ~> int_node(n.dtype(), 0),
    }
}
