//! Boolean algebra on bools and, where the identity is bitwise, on
//! integers: constants, complements, absorption, De Morgan, and comparisons
//! of bools with constants.
//!
//! "All ones" is `true` for bools, `-1` for signed and `MAX` for unsigned
//! integers, so `x & ones = x` holds for both.

use super::eval::exec_alu;
use super::{all_ones, either, int_const, int_node, is_int_or_bool, same};
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// True if `n` is the all-ones constant of its (integer or bool) type.
fn is_ones(n: &Arc<UOp>) -> bool {
    is_int_or_bool(n) && int_const(n).is_some_and(|v| v == all_ones(n.dtype()))
}

/// The complement's operand, if `n` is `Not(x)`.
fn not_of(n: &Arc<UOp>) -> Option<&Arc<UOp>> {
    (n.op() == Op::Not).then(|| n.s(0))
}

/// Boolean algebra rules.
pub fn boolean() -> PatternMatcher {
    let mut pm = PatternMatcher::new("boolean");

    // !!x → x (bools and bitwise not on integers).
    pm.rule(&[Op::Not], |n, _| {
        (is_int_or_bool(n) && n.s(0).op() == Op::Not).then(|| n.s(0).s(0).clone())
    });
    // x & ones → x.
    pm.rule(&[Op::And], |n, _| either(n, |x, c| is_ones(c).then(|| x.clone())));
    // x | ones → ones.
    pm.rule(&[Op::Or], |n, _| either(n, |_, c| is_ones(c).then(|| c.clone())));
    // x ^ ones → !x.
    pm.rule(&[Op::Xor], |n, _| either(n, |x, c| is_ones(c).then(|| x.un(Op::Not))));
    // x & !x → 0.
    pm.rule(&[Op::And], |n, _| {
        either(n, |x, nx| {
            (is_int_or_bool(x) && not_of(nx).is_some_and(|y| same(x, y)))
                .then(|| int_node(n.dtype(), 0))
        })
    });
    // x | !x → ones and x ^ !x → ones.
    for op in [Op::Or, Op::Xor] {
        pm.rule(&[op], |n, _| {
            either(n, |x, nx| {
                (is_int_or_bool(x) && not_of(nx).is_some_and(|y| same(x, y)))
                    .then(|| int_node(n.dtype(), all_ones(n.dtype())))
            })
        });
    }
    // Absorption: x & (x | y) → x.
    pm.rule(&[Op::And], |n, _| {
        either(n, |x, o| {
            (is_int_or_bool(x) && o.op() == Op::Or && (same(o.s(0), x) || same(o.s(1), x)))
                .then(|| x.clone())
        })
    });
    // Absorption: x | (x & y) → x.
    pm.rule(&[Op::Or], |n, _| {
        either(n, |x, a| {
            (is_int_or_bool(x) && a.op() == Op::And && (same(a.s(0), x) || same(a.s(1), x)))
                .then(|| x.clone())
        })
    });
    // De Morgan: !a & !b → !(a | b) and !a | !b → !(a & b) (one op fewer).
    for (op, dual) in [(Op::And, Op::Or), (Op::Or, Op::And)] {
        pm.rule(&[op], move |n, _| {
            let (a, b) = (not_of(n.s(0))?, not_of(n.s(1))?);
            is_int_or_bool(n).then(|| a.bin(dual, b).un(Op::Not))
        });
    }
    // !a ^ !b → a ^ b.
    pm.rule(&[Op::Xor], |n, _| {
        let (a, b) = (not_of(n.s(0))?, not_of(n.s(1))?);
        is_int_or_bool(n).then(|| a.bin(Op::Xor, b))
    });
    // Bools compared with constants: x == true → x, x == false → !x.
    pm.rule(&[Op::CmpEq], |n, _| {
        either(n, |x, c| {
            let v = c.const_value()?;
            x.dtype().is_bool().then(|| if v.truthy() { x.clone() } else { x.un(Op::Not) })
        })
    });
    // x != false → x, x != true → !x.
    pm.rule(&[Op::CmpNe], |n, _| {
        either(n, |x, c| {
            let v = c.const_value()?;
            x.dtype().is_bool().then(|| if v.truthy() { x.un(Op::Not) } else { x.clone() })
        })
    });
    // Bool arithmetic is logic: a + b and max(a, b) are a | b; a * b and
    // min(a, b) are a & b.
    pm.rule(&[Op::Add, Op::Max], |n, _| {
        n.dtype().is_bool().then(|| n.s(0).bin(Op::Or, n.s(1)))
    });
    pm.rule(&[Op::Mul, Op::Min], |n, _| {
        n.dtype().is_bool().then(|| n.s(0).bin(Op::And, n.s(1)))
    });
    // (x < c1) & (x < c2) → x < min(c1, c2), and with | the max (every
    // type: a NaN x makes every side false).
    for (op, keep_min) in [(Op::And, true), (Op::Or, false)] {
        pm.rule(&[op], move |n, _| {
            let (l, r) = (n.s(0), n.s(1));
            if l.op() != Op::CmpLt || r.op() != Op::CmpLt || !same(l.s(0), r.s(0)) {
                return None;
            }
            let (c1, c2) = (l.s(1).const_value()?, r.s(1).const_value()?);
            if c1.as_f64().is_nan() || c2.as_f64().is_nan() {
                return None;
            }
            let le = exec_alu(Op::CmpLe, l.s(1).dtype(), &[c1, c2])? == ConstValue::Bool(true);
            let pick_first = le == keep_min;
            Some(if pick_first { l.clone() } else { r.clone() })
        });
    }
    pm
}
