//! Comparison folding: self-comparisons, negated comparisons, and moving
//! constants across `<` and `==` (comparisons decided by bounds are folded
//! by [`known`](super::known)).

use super::bounds::int_bounds;
use super::{either, fits, int_const, int_node, is_int, is_int_or_bool, same};
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// A bool constant shaped like comparison `n`'s result.
fn bool_of(n: &Arc<UOp>, v: bool) -> Arc<UOp> {
    UOp::const_(n.dtype(), ConstValue::Bool(v))
}

/// `(x, c)` if `n` is `x + c` (either order) with integer constant `c`.
fn add_const(n: &Arc<UOp>) -> Option<(&Arc<UOp>, i128)> {
    if n.op() != Op::Add || !is_int(n) {
        return None;
    }
    match (int_const(n.s(0)), int_const(n.s(1))) {
        (_, Some(c)) => Some((n.s(0), c)),
        (Some(c), _) => Some((n.s(1), c)),
        _ => None,
    }
}

/// `(x, c)` if `n` is the binary op `op` of integers `x` and constant `c`
/// (either order, except for `Idiv`); `Xor` also matches bools.
fn op_const(n: &Arc<UOp>, op: Op) -> Option<(&Arc<UOp>, i128)> {
    if n.op() != op || !(is_int(n) || (op == Op::Xor && is_int_or_bool(n))) {
        return None;
    }
    match (int_const(n.s(0)), int_const(n.s(1))) {
        (_, Some(c)) => Some((n.s(0), c)),
        (Some(c), _) if op != Op::Idiv => Some((n.s(1), c)),
        _ => None,
    }
}

/// Comparison rules.
pub fn compare() -> PatternMatcher {
    let mut pm = PatternMatcher::new("compare");

    // x < x → false for every type (NaN < NaN is false too).
    pm.rule(&[Op::CmpLt], |n, _| same(n.s(0), n.s(1)).then(|| bool_of(n, false)));
    // x <= x → true and x == x → true for integers and bools (not NaN).
    pm.rule(&[Op::CmpLe, Op::CmpEq], |n, _| {
        (is_int_or_bool(n.s(0)) && same(n.s(0), n.s(1))).then(|| bool_of(n, true))
    });
    // x != x → false for integers and bools.
    pm.rule(&[Op::CmpNe], |n, _| {
        (is_int_or_bool(n.s(0)) && same(n.s(0), n.s(1))).then(|| bool_of(n, false))
    });
    // !(a < b) → b <= a and !(a <= b) → b < a for integers and bools (with
    // a NaN both sides of the float version differ).
    for (op, flipped) in [(Op::CmpLt, Op::CmpLe), (Op::CmpLe, Op::CmpLt)] {
        pm.rule(&[Op::Not], move |n, _| {
            let c = n.s(0);
            (c.op() == op && is_int_or_bool(c.s(0))).then(|| c.s(1).bin(flipped, c.s(0)))
        });
    }
    // !(a == b) → a != b and !(a != b) → a == b for every type.
    for (op, inverse) in [(Op::CmpEq, Op::CmpNe), (Op::CmpNe, Op::CmpEq)] {
        pm.rule(&[Op::Not], move |n, _| {
            let c = n.s(0);
            (c.op() == op).then(|| c.s(0).bin(inverse, c.s(1)))
        });
    }
    // x + c1 < c2 → x < c2 - c1 for integers, when x + c1 cannot wrap and
    // c2 - c1 is representable.
    pm.rule(&[Op::CmpLt], |n, _| {
        let (x, c1) = add_const(n.s(0))?;
        let c2 = int_const(n.s(1))?;
        let (lo, hi) = int_bounds(x)?;
        let t = x.dtype();
        (fits(t, (lo + c1, hi + c1)) && fits(t, (c2 - c1, c2 - c1)))
            .then(|| x.bin(Op::CmpLt, &int_node(t, c2 - c1)))
    });
    // c2 < x + c1 → c2 - c1 < x, under the same conditions.
    pm.rule(&[Op::CmpLt], |n, _| {
        let c2 = int_const(n.s(0))?;
        let (x, c1) = add_const(n.s(1))?;
        let (lo, hi) = int_bounds(x)?;
        let t = x.dtype();
        (fits(t, (lo + c1, hi + c1)) && fits(t, (c2 - c1, c2 - c1)))
            .then(|| int_node(t, c2 - c1).bin(Op::CmpLt, x))
    });
    // x + c1 == c2 → x == c2 - c1 (and !=): adding a constant is a
    // bijection even with wrap-around, so this holds for every integer type.
    pm.rule(&[Op::CmpEq, Op::CmpNe], |n, _| {
        either(n, |s, k| {
            let (x, c1) = add_const(s)?;
            let c2 = int_const(k)?;
            Some(x.bin(n.op(), &int_node(x.dtype(), c2 - c1)))
        })
    });
    // x ^ c1 == c2 → x == c1 ^ c2 (and !=), also a bijection.
    pm.rule(&[Op::CmpEq, Op::CmpNe], |n, _| {
        either(n, |s, k| {
            let (x, c1) = op_const(s, Op::Xor)?;
            let c2 = int_const(k)?;
            Some(x.bin(n.op(), &int_node(x.dtype(), c1 ^ c2)))
        })
    });
    // x * c < d → x < ceil(d / c) for integers, c > 0, when x * c cannot wrap.
    pm.rule(&[Op::CmpLt], |n, _| {
        let (x, c) = op_const(n.s(0), Op::Mul)?;
        let d = int_const(n.s(1))?;
        let (lo, hi) = int_bounds(x)?;
        let t = x.dtype();
        if c <= 0 {
            return None;
        }
        let bound = -((-d).div_euclid(c));
        let range = (lo.checked_mul(c)?, hi.checked_mul(c)?);
        (fits(t, range) && fits(t, (bound, bound)))
            .then(|| x.bin(Op::CmpLt, &int_node(t, bound)))
    });
    // x // c < d → x < d * c for integers, c > 0 and d > 0 (truncation and
    // floor agree on the side that decides it), when d * c is representable.
    pm.rule(&[Op::CmpLt], |n, _| {
        let (x, c) = op_const(n.s(0), Op::Idiv)?;
        let d = int_const(n.s(1))?;
        let t = x.dtype();
        let dc = d.checked_mul(c)?;
        (c > 0 && d > 0 && fits(t, (dc, dc))).then(|| x.bin(Op::CmpLt, &int_node(t, dc)))
    });
    // -x < c → -c < x for signed integers, when neither negation wraps.
    pm.rule(&[Op::CmpLt], |n, _| {
        let x = n.s(0).op().eq(&Op::Neg).then(|| n.s(0).s(0))?;
        let c = int_const(n.s(1))?;
        let (lo, _) = int_bounds(x)?;
        let t = x.dtype();
        let min = t.scalar_type().min_int();
        (t.scalar_type().is_signed_int() && lo > min && c > min)
            .then(|| int_node(t, -c).bin(Op::CmpLt, x))
    });
    // x != c → x < c when c is x's largest value, and → c < x when it is the
    // smallest (integers): one comparison the index code can reuse.
    pm.rule(&[Op::CmpNe], |n, _| {
        either(n, |x, k| {
            let c = int_const(k)?;
            let (lo, hi) = int_bounds(x)?;
            if !is_int_or_bool(x) || lo == hi {
                None
            } else if c == hi {
                Some(x.bin(Op::CmpLt, k))
            } else if c == lo {
                Some(k.bin(Op::CmpLt, x))
            } else {
                None
            }
        })
    });

    pm
}
