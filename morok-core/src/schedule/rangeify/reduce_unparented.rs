//! Reduce unparented: the ranges of a REDUCE that its body does not use.
//!
//! Matches `REDUCE(x, r_used…, r_unused…)` where `x` does not depend on
//! the ranges `r_unused` (of sizes `n_i`, product `N`). Every iteration of
//! an unused range combines the same value, so the reduction over them is
//! a closed form of `y = REDUCE(x, r_used…)` (or `x` itself when no range
//! is used):
//!
//! | op | produces | why it is exact |
//! |---|---|---|
//! | ADD | `y · N` | `N` equal terms (floats: the existing tolerance of a sum, integers: wrap-around is a ring) |
//! | MAX, MIN | `y` | the ops are idempotent (NaN stays NaN) |
//! | MUL, integer | `y^N` by repeated squaring | wrapping multiplication is associative and commutative, so any grouping of the `N` factors gives the same bits |
//! | MUL, bool | `y` | MUL of bools is AND, which is idempotent |
//! | MUL, float | `x·x·…·x` (left to right) | only with no used range and `N ≤` [`FLOAT_POWER_MAX`]: the same products in the same order as the loop, so bit-identical |
//!
//! A float product over used ranges as well, or over more than
//! [`FLOAT_POWER_MAX`] iterations, is left alone: regrouping its factors
//! would change the rounding.

use super::depends_on;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Arg, ReduceOp, UOp};
use std::sync::Arc;

/// The longest float product written out as a chain of multiplications.
pub const FLOAT_POWER_MAX: i64 = 8;

/// The reduce-unparented rule set.
pub fn reduce_unparented_rules() -> PatternMatcher {
    patterns! {
        @name "reduce-unparented";
        n @ Reduce(..) => reduce_unparented(n),
    }
}

/// `REDUCE(x, r_used…, r_unused…)` → the closed form over the unused ranges.
fn reduce_unparented(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let Arg::Reduce(op) = n.arg() else {
        return None;
    };
    let op = *op;
    let x = n.s(0);
    let (used, unused): (Vec<_>, Vec<_>) =
        n.src()[1..].iter().cloned().partition(|r| depends_on(x, r));
    if unused.is_empty() {
        return None;
    }
    let count: i64 = unused.iter().map(|r| super::axis_size(r) as i64).product();
    if count == 0 {
        return None;
    }
    let dt = n.dtype();
    let float_chain = op == ReduceOp::Mul && dt.is_float();
    if float_chain && (!used.is_empty() || count > FLOAT_POWER_MAX) {
        return None;
    }
    let rest = if used.is_empty() {
        x.clone()
    } else {
        x.reduce(op, &used)
    };
    match op {
        _ if dt.is_bool() => Some(rest),
        ReduceOp::Max | ReduceOp::Min => Some(rest),
        ReduceOp::Add => Some(rest.mul(&UOp::index(count).cast(dt))),
        ReduceOp::Mul if float_chain => {
            let mut out = rest.clone();
            for _ in 1..count {
                out = out.mul(&rest);
            }
            Some(out)
        }
        ReduceOp::Mul => Some(int_power(&rest, count)),
    }
}

/// `y^e` for an integer `y` and `e ≥ 0` by repeated squaring (`O(log e)`
/// multiplications; exact under wrap-around).
fn int_power(y: &Arc<UOp>, e: i64) -> Arc<UOp> {
    let mut out = UOp::one(y.dtype());
    let mut square = y.clone();
    let mut e = e;
    while e > 0 {
        if e & 1 == 1 {
            out = if out.is_one_const() {
                square.clone()
            } else {
                out.mul(&square)
            };
        }
        e >>= 1;
        if e > 0 {
            square = square.mul(&square);
        }
    }
    out
}
