//! Reassociation and term collection for integers: constants gather at the
//! outside of sums and products and combine, constant factors distribute
//! over constant offsets, and like terms merge.
//!
//! Every rule here is a ring identity, and wrapping integer arithmetic is
//! the ring of integers modulo 2^width, so they hold for every integer type
//! with wrap-around (they do not hold for floats, whose `+` and `*` are not
//! associative).

use super::{either, int_const, int_node, is_int, same};
use crate::rewrite::PatternMatcher;
use crate::uop::{Op, UOp};
use std::sync::Arc;

/// `(x, c)` if `n` is the integer op `op` of `x` and a constant `c` (either
/// order).
fn with_const(n: &Arc<UOp>, op: Op) -> Option<(&Arc<UOp>, i128)> {
    if n.op() != op || !is_int(n) {
        return None;
    }
    match (int_const(n.s(0)), int_const(n.s(1))) {
        (_, Some(c)) => Some((n.s(0), c)),
        (Some(c), _) => Some((n.s(1), c)),
        _ => None,
    }
}

/// `(x, c)` if `n` is `x * c`, or `(n, 1)` otherwise: the term's factor.
fn term(n: &Arc<UOp>) -> (&Arc<UOp>, i128) {
    with_const(n, Op::Mul).unwrap_or((n, 1))
}

/// Reassociation rules.
pub fn reassoc() -> PatternMatcher {
    let mut pm = PatternMatcher::new("reassoc");

    // (x + c1) + c2 → x + (c1 + c2) and (x * c1) * c2 → x * (c1 * c2).
    for op in [Op::Add, Op::Mul] {
        pm.rule(&[op], move |n, _| {
            either(n, |inner, k| {
                let c2 = int_const(k)?;
                let (x, c1) = with_const(inner, op)?;
                let c = if op == Op::Add { c1 + c2 } else { c1.wrapping_mul(c2) };
                Some(x.bin(op, &int_node(n.dtype(), c)))
            })
        });
    }
    // (x + c) + y → (x + y) + c and (x * c) * y → (x * y) * c for a
    // non-constant y: constants move outward, where they meet and combine.
    for op in [Op::Add, Op::Mul] {
        pm.rule(&[op], move |n, _| {
            either(n, |inner, y| {
                if y.const_value().is_some() {
                    return None;
                }
                let (x, c) = with_const(inner, op)?;
                Some(x.bin(op, y).bin(op, &int_node(n.dtype(), c)))
            })
        });
    }
    // x - c → x + (-c) (the negation wraps, which is still correct mod 2^n).
    pm.rule(&[Op::Sub], |n, _| {
        let c = int_const(n.s(1))?;
        is_int(n).then(|| n.s(0).add(&int_node(n.dtype(), -c)))
    });
    // (x + c1) * c2 → x * c2 + c1 * c2: constant offsets leave products, so
    // index expressions become sums of scaled terms.
    pm.rule(&[Op::Mul], |n, _| {
        either(n, |inner, k| {
            let c2 = int_const(k)?;
            let (x, c1) = with_const(inner, Op::Add)?;
            Some(x.mul(k).add(&int_node(n.dtype(), c1.wrapping_mul(c2))))
        })
    });
    // Like terms: x * c1 + x * c2 → x * (c1 + c2), with x + x → x * 2 and
    // x * c + x → x * (c + 1) as the cases with a factor of one.
    pm.rule(&[Op::Add], |n, _| {
        if !is_int(n) {
            return None;
        }
        let ((x1, c1), (x2, c2)) = (term(n.s(0)), term(n.s(1)));
        (same(x1, x2) && x1.const_value().is_none())
            .then(|| x1.mul(&int_node(n.dtype(), c1 + c2)))
    });
    // -(x * c) → x * (-c).
    pm.rule(&[Op::Neg], |n, _| {
        let (x, c) = with_const(n.s(0), Op::Mul)?;
        Some(x.mul(&int_node(n.dtype(), -c)))
    });
    // (x + y) - y → x and (x - y) + y → x.
    pm.rule(&[Op::Sub], |n, _| {
        let (s, y) = (n.s(0), n.s(1));
        if !is_int(n) || s.op() != Op::Add {
            return None;
        }
        if same(s.s(1), y) {
            Some(s.s(0).clone())
        } else if same(s.s(0), y) {
            Some(s.s(1).clone())
        } else {
            None
        }
    });
    pm.rule(&[Op::Add], |n, _| {
        either(n, |d, y| {
            (is_int(n) && d.op() == Op::Sub && same(d.s(1), y)).then(|| d.s(0).clone())
        })
    });
    // x + (-y) → x - y and x - (-y) → x + y, for every type (IEEE defines
    // subtraction as addition of the negation, so floats agree exactly).
    pm.rule(&[Op::Add], |n, _| {
        either(n, |x, ny| (ny.op() == Op::Neg).then(|| x.bin(Op::Sub, ny.s(0))))
    });
    pm.rule(&[Op::Sub], |n, _| {
        let ny = n.s(1);
        (ny.op() == Op::Neg).then(|| n.s(0).add(ny.s(0)))
    });
    // max(max(x, c1), c2) → max(x, max(c1, c2)), and min likewise, for
    // integers (associativity; the constants fold).
    for op in [Op::Max, Op::Min] {
        pm.rule(&[op], move |n, _| {
            either(n, |inner, k| {
                let c2 = int_const(k)?;
                let (x, c1) = with_const(inner, op)?;
                let c = if op == Op::Max { c1.max(c2) } else { c1.min(c2) };
                Some(x.bin(op, &int_node(n.dtype(), c)))
            })
        });
    }

    pm
}
