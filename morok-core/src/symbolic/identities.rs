//! Algebraic identities: neutral and absorbing elements, self-cancelling
//! and idempotent operations, involutions.
//!
//! Float rules are restricted to the cases IEEE 754 allows: `x + 0` is not
//! `x` for `x = -0` (but `x + -0` is), `x * 0` is not `0` for NaN, inf or
//! negative `x`, and `x - x` is NaN for infinite `x`.

use super::{either, int_const, int_node, is_int, is_int_or_bool, same};
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// True if `n` is a CONST of exactly `v` (for floats: same bits, so `0.0`
/// and `-0.0` differ).
fn is_const(n: &Arc<UOp>, v: f64) -> bool {
    n.const_value().is_some_and(|c| match c {
        ConstValue::Float(f) => f.to_bits() == v.to_bits(),
        c => c.as_f64() == v,
    })
}

/// True for the rounding ops, which are the identity on integer values.
fn is_rounding(op: Op) -> bool {
    matches!(op, Op::Floor | Op::Ceil | Op::Round | Op::Trunc)
}

/// Identity rules.
pub fn identities() -> PatternMatcher {
    let mut pm = PatternMatcher::new("identities");

    // x + 0 → x for integers and bools; for floats only x + (-0.0).
    pm.rule(&[Op::Add], |n, _| {
        either(n, |x, z| {
            let zero = if x.dtype().is_float() { -0.0 } else { 0.0 };
            is_const(z, zero).then(|| x.clone())
        })
    });
    // x - 0 → x (for floats: x - (+0.0), which keeps -0).
    pm.rule(&[Op::Sub], |n, _| is_const(n.s(1), 0.0).then(|| n.s(0).clone()));
    // x * 1 → x for every type.
    pm.rule(&[Op::Mul], |n, _| either(n, |x, one| is_const(one, 1.0).then(|| x.clone())));
    // x * 0 → 0 for integers and bools.
    pm.rule(&[Op::Mul], |n, _| {
        either(n, |x, z| (is_int_or_bool(x) && is_const(z, 0.0)).then(|| z.clone()))
    });
    // x // 1 → x (integers; for bools, division by true).
    pm.rule(&[Op::Idiv], |n, _| {
        (is_int_or_bool(n) && is_const(n.s(1), 1.0)).then(|| n.s(0).clone())
    });
    // x // -1 → -x for signed integers (MIN // -1 is undefined anyway).
    pm.rule(&[Op::Idiv], |n, _| {
        (is_int(n) && int_const(n.s(1)) == Some(-1)).then(|| n.s(0).un(Op::Neg))
    });
    // x / 1.0 → x for floats.
    pm.rule(&[Op::Fdiv], |n, _| is_const(n.s(1), 1.0).then(|| n.s(0).clone()));
    // x % 1 → 0 and x % -1 → 0 for integers and bools.
    pm.rule(&[Op::Mod], |n, _| {
        let d = int_const(n.s(1))?;
        (d == 1 || d == -1).then(|| int_node(n.dtype(), 0))
    });
    // Idempotent ops: x & x → x, x | x → x (integers, bools),
    // max(x, x) → x, min(x, x) → x (every type; NaN stays NaN).
    for op in [Op::And, Op::Or, Op::Max, Op::Min] {
        pm.rule(&[op], |n, _| same(n.s(0), n.s(1)).then(|| n.s(0).clone()));
    }
    // x ^ x → 0 and x - x → 0 for integers and bools (not floats: inf - inf).
    for op in [Op::Xor, Op::Sub] {
        pm.rule(&[op], |n, _| {
            (is_int_or_bool(n) && same(n.s(0), n.s(1))).then(|| int_node(n.dtype(), 0))
        });
    }
    // -(-x) → x for every type (wrapping negation is an involution too).
    pm.rule(&[Op::Neg], |n, _| (n.s(0).op() == Op::Neg).then(|| n.s(0).s(0).clone()));
    // -(a - b) → b - a for integers (for floats a = b gives -0 vs +0).
    pm.rule(&[Op::Neg], |n, _| {
        let d = n.s(0);
        (is_int(n) && d.op() == Op::Sub).then(|| d.s(1).bin(Op::Sub, d.s(0)))
    });
    // x & 0 → 0 for integers and bools.
    pm.rule(&[Op::And], |n, _| {
        either(n, |x, z| (is_int_or_bool(x) && is_const(z, 0.0)).then(|| z.clone()))
    });
    // x | 0 → x and x ^ 0 → x for integers and bools.
    for op in [Op::Or, Op::Xor] {
        pm.rule(&[op], |n, _| {
            either(n, |x, z| (is_int_or_bool(x) && is_const(z, 0.0)).then(|| x.clone()))
        });
    }
    // x << 0 → x and x >> 0 → x.
    for op in [Op::Shl, Op::Shr] {
        pm.rule(&[op], |n, _| (int_const(n.s(1)) == Some(0)).then(|| n.s(0).clone()));
    }
    // 0 << s → 0 and 0 >> s → 0 (shifts by the width or more are undefined).
    pm.rule(&[Op::Shl, Op::Shr], |n, _| {
        (is_int(n) && int_const(n.s(0)) == Some(0)).then(|| n.s(0).clone())
    });
    // ||x|| → |x| for every type (|MIN| wraps to MIN, whose |.| is MIN).
    pm.rule(&[Op::Abs], |n, _| (n.s(0).op() == Op::Abs).then(|| n.s(0).clone()));
    // Rounding an integer or bool is the identity.
    pm.rule(&[Op::Floor, Op::Ceil, Op::Round, Op::Trunc], |n, _| {
        is_int_or_bool(n).then(|| n.s(0).clone())
    });
    // Rounding a rounded float changes nothing: every rounding op returns
    // integral values, infinities or NaN, which all rounding ops keep.
    pm.rule(&[Op::Floor, Op::Ceil, Op::Round, Op::Trunc], |n, _| {
        is_rounding(n.s(0).op()).then(|| n.s(0).clone())
    });
    // isnan(x) → false for integers and bools.
    pm.rule(&[Op::IsNan], |n, _| {
        is_int_or_bool(n.s(0)).then(|| UOp::const_(n.dtype(), ConstValue::Bool(false)))
    });
    // fma(a, 1, c) → a + c: with a factor of one the fused and the separate
    // forms round the same exact sum once (every type).
    pm.rule(&[Op::MulAcc], |n, _| {
        let (a, b, c) = (n.s(0), n.s(1), n.s(2));
        let one = |v: &Arc<UOp>| is_const(v, 1.0);
        if one(b) {
            Some(a.add(c))
        } else if one(a) {
            Some(b.add(c))
        } else {
            None
        }
    });
    // a * 0 + c → c for integers.
    pm.rule(&[Op::MulAcc], |n, _| {
        let zero = |v: &Arc<UOp>| is_const(v, 0.0);
        (is_int(n) && (zero(n.s(0)) || zero(n.s(1)))).then(|| n.s(2).clone())
    });
    // a * b + 0 → a * b for integers.
    pm.rule(&[Op::MulAcc], |n, _| {
        (is_int(n) && is_const(n.s(2), 0.0)).then(|| n.s(0).mul(n.s(1)))
    });
    // pow(x, 1) → x and pow(x, ±0) → 1 (C's pow: also for NaN x).
    pm.rule(&[Op::Pow], |n, _| is_const(n.s(1), 1.0).then(|| n.s(0).clone()));
    pm.rule(&[Op::Pow], |n, _| {
        let e = n.s(1).const_value()?;
        (n.dtype().is_float() && e.as_f64() == 0.0).then(|| UOp::one(n.dtype()))
    });

    pm
}
