//! Reassociation and term collection for integers: constants gather at the
//! outside of sums and products and combine, constant factors distribute
//! over constant offsets, and like terms merge.
//!
//! Every integer rule here is a ring identity, and wrapping integer
//! arithmetic is the ring of integers modulo 2^width, so they hold for
//! every integer type with wrap-around (they do not hold for floats, whose
//! `+` and `*` are not associative).

use super::{int_node, is_int};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// `op(c1, c2)` for the associative integer ops of this file.
fn combine(op: Op, c1: ConstValue, c2: ConstValue) -> Option<i128> {
    let (a, b) = (c1.as_i128()?, c2.as_i128()?);
    Some(match op {
        Op::Add => a + b,
        Op::Mul => a.wrapping_mul(b),
        Op::Max => a.max(b),
        _ => a.min(b),
    })
}

/// `(x, c)` if `n` is `x * c` (either order), else `(n, 1)`: a term and
/// its constant factor.
fn term(n: &Arc<UOp>) -> (&Arc<UOp>, i128) {
    if n.op() == Op::Mul {
        for (x, k) in [(n.s(0), n.s(1)), (n.s(1), n.s(0))] {
            if let Some(c) = k.const_int() {
                return (x, c);
            }
        }
    }
    (n, 1)
}

/// Like terms: `x*c1 + x*c2 → x*(c1 + c2)`, with `x + x → x*2` and
/// `x*c + x → x*(c + 1)` as the cases with a factor of one.
fn like_terms(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let ((x1, c1), (x2, c2)) = (term(n.s(0)), term(n.s(1)));
    (Arc::ptr_eq(x1, x2) && x1.const_value().is_none())
        .then(|| x1.mul(&int_node(n.dtype(), c1 + c2)))
}

/// Reassociation rules.
pub fn reassoc() -> PatternMatcher {
    patterns! {
        @name "reassoc";
        // (x + c1) + c2 → x + (c1 + c2) and (x * c1) * c2 → x * (c1 * c2);
        // max and min likewise.
        for op in binary [Add, Mul, Max, Min] {
            n @ op[op[x, @const(c1)], @const(c2)] if is_int(n)
                => Some(x.bin(op, &int_node(n.dtype(), combine(op, c1, c2)?))),
        }
        // (x + c) + y → (x + y) + c and (x * c) * y → (x * y) * c for a
        // non-constant y: constants move outward, where they meet and combine.
        for op in binary [Add, Mul] {
            n @ op[op[x, c @ @const], y] if is_int(n) && y.const_value().is_none()
                ~> x.bin(op, y).bin(op, c),
        }
        // x - c → x + (-c) (the negation wraps, which is still right mod 2^n).
        n @ Sub(x, @const(c)) if is_int(n) => Some(x.add(&int_node(n.dtype(), -c.as_i128()?))),
        // (x + c1) * c2 → x * c2 + c1 * c2: constant offsets leave products,
        // so index expressions become sums of scaled terms.
        n @ Mul[Add[x, @const(c1)], k @ @const(c2)] if is_int(n)
            => Some(x.mul(k).add(&int_node(n.dtype(), combine(Op::Mul, c1, c2)?))),
        n @ Add(..) if is_int(n) => like_terms(n),
        // -(x * c) → x * (-c).
        n @ Neg(Mul[x, @const(c)]) if is_int(n) => Some(x.mul(&int_node(n.dtype(), -c.as_i128()?))),
        // (x + y) - y → x and (x - y) + y → x.
        n @ Sub(Add[x, y], y) if is_int(n) ~> x,
        n @ Add[Sub(x, y), y] if is_int(n) ~> x,
        // x + (-y) → x - y and x - (-y) → x + y, for every type (IEEE defines
        // subtraction as addition of the negation, so floats agree exactly).
        Add[x, Neg(y)] ~> x.bin(Op::Sub, y),
        Sub(x, Neg(y)) ~> x.add(y),
    }
}
