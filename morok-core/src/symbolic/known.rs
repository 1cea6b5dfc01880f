//! Rules decided by value bounds (see [`bounds`](super::bounds)): a node
//! whose bounds pin its value down, and ops that bounds make redundant.

use super::bounds::int_bounds;
use super::{either, int_const, int_node, is_int, is_int_or_bool, same};
use crate::rewrite::PatternMatcher;
use crate::uop::{Op, OpGroup};

/// Bounds-driven rules.
pub fn known() -> PatternMatcher {
    let mut pm = PatternMatcher::new("known");

    // An integer or bool ALU op or cast whose bounds are one point is that
    // constant (this decides comparisons, quotients of bounded values, ...).
    pm.rule(&[], |n, _| {
        let alu = matches!(
            n.op().group(),
            OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
        ) || n.op() == Op::Cast;
        if !alu || !is_int_or_bool(n) || n.dtype().is_vector() {
            return None;
        }
        let (lo, hi) = int_bounds(n)?;
        (lo == hi).then(|| int_node(n.dtype(), lo))
    });

    // max(x, y) → x when every x is at least every y (integers).
    pm.rule(&[Op::Max], |n, _| {
        either(n, |x, y| {
            let (bx, by) = (int_bounds(x)?, int_bounds(y)?);
            (is_int_or_bool(x) && bx.0 >= by.1).then(|| x.clone())
        })
    });

    // min(x, y) → x when every x is at most every y (integers).
    pm.rule(&[Op::Min], |n, _| {
        either(n, |x, y| {
            let (bx, by) = (int_bounds(x)?, int_bounds(y)?);
            (is_int_or_bool(x) && bx.1 <= by.0).then(|| x.clone())
        })
    });

    // |x| → x when x ≥ 0, and → -x when x ≤ 0 (wrapping -MIN = MIN = |MIN|).
    pm.rule(&[Op::Abs], |n, _| {
        let x = n.s(0);
        let (lo, hi) = int_bounds(x)?;
        if !is_int(x) {
            None
        } else if lo >= 0 {
            Some(x.clone())
        } else if hi <= 0 {
            Some(x.un(Op::Neg))
        } else {
            None
        }
    });

    // x & (2^k - 1) → x when 0 ≤ x < 2^k: the mask keeps every bit of x.
    pm.rule(&[Op::And], |n, _| {
        either(n, |x, m| {
            let mask = int_const(m)?;
            let (lo, hi) = int_bounds(x)?;
            (is_int(x) && mask >= 0 && (mask + 1) & mask == 0 && lo >= 0 && hi <= mask)
                .then(|| x.clone())
        })
    });

    // x // x → 1 and x % x → 0 when x is never zero (MIN / MIN = 1 too).
    pm.rule(&[Op::Idiv], |n, _| {
        let x = n.s(0);
        let (lo, hi) = int_bounds(x)?;
        (same(x, n.s(1)) && is_int(x) && (lo > 0 || hi < 0)).then(|| int_node(n.dtype(), 1))
    });
    pm.rule(&[Op::Mod], |n, _| {
        let x = n.s(0);
        let (lo, hi) = int_bounds(x)?;
        (same(x, n.s(1)) && is_int(x) && (lo > 0 || hi < 0)).then(|| int_node(n.dtype(), 0))
    });

    pm
}
