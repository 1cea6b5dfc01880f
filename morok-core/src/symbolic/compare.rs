//! Comparison folding: self-comparisons, negated comparisons, and moving
//! constants across `<` and `==` (comparisons decided by bounds are folded
//! by [`known`](super::known)).

use super::bounds::int_bounds;
use super::{fits, int_node, is_int, is_int_or_bool};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// A bool constant shaped like comparison `n`'s result.
fn bool_of(n: &Arc<UOp>, v: bool) -> Arc<UOp> {
    UOp::const_(n.dtype(), ConstValue::Bool(v))
}

/// The integer value of a constant of an integer-typed node `x`.
fn int(x: &Arc<UOp>, c: ConstValue) -> Option<i128> {
    if is_int(x) {
        c.as_i128()
    } else {
        None
    }
}

/// True if `x + c` cannot wrap and `k` is representable in `x`'s type.
fn shift_ok(x: &Arc<UOp>, c: i128, k: i128) -> bool {
    let t = x.dtype();
    int_bounds(x).is_some_and(|(lo, hi)| fits(t, (lo + c, hi + c)) && fits(t, (k, k)))
}

/// `x * c < d  ⇔  x < ceil(d / c)` for `c > 0` when `x * c` cannot wrap.
fn scaled_lt(x: &Arc<UOp>, c: ConstValue, d: ConstValue) -> Option<Arc<UOp>> {
    let (c, d) = (int(x, c)?, int(x, d)?);
    if c <= 0 {
        return None;
    }
    let (lo, hi) = int_bounds(x)?;
    let bound = -((-d).div_euclid(c));
    let t = x.dtype();
    (fits(t, (lo.checked_mul(c)?, hi.checked_mul(c)?)) && fits(t, (bound, bound)))
        .then(|| x.bin(Op::CmpLt, &int_node(t, bound)))
}

/// `x // c < d  ⇔  x < d * c` for `c, d > 0` when `d * c` is representable
/// (truncation and floor agree on the side that decides it).
fn quotient_lt(x: &Arc<UOp>, c: ConstValue, d: ConstValue) -> Option<Arc<UOp>> {
    let (c, d) = (int(x, c)?, int(x, d)?);
    let dc = d.checked_mul(c)?;
    (c > 0 && d > 0 && fits(x.dtype(), (dc, dc)))
        .then(|| x.bin(Op::CmpLt, &int_node(x.dtype(), dc)))
}

/// `d < x // c  ⇔  (d + 1) * c - 1 < x` for `c > 0`, `d >= 0` when the
/// bound is representable: the quotient exceeds `d` exactly when `x`
/// reaches `(d + 1) * c` (a negative `x` has a quotient of at most 0,
/// and is below the bound too). With the rule above, `!(x // c < d)`
/// reaches the same comparison of `x` as `d - 1 < x // c`.
fn lt_quotient(x: &Arc<UOp>, c: ConstValue, d: ConstValue) -> Option<Arc<UOp>> {
    let (c, d) = (int(x, c)?, int(x, d)?);
    let bound = d.checked_add(1)?.checked_mul(c)?.checked_sub(1)?;
    (c > 0 && d >= 0 && fits(x.dtype(), (bound, bound)))
        .then(|| int_node(x.dtype(), bound).bin(Op::CmpLt, x))
}

/// `-x < c  ⇔  -c < x` for signed integers when neither negation wraps.
fn negated_lt(x: &Arc<UOp>, c: ConstValue) -> Option<Arc<UOp>> {
    let c = int(x, c)?;
    let t = x.dtype().scalar_type();
    let (lo, _) = int_bounds(x)?;
    (t.is_signed_int() && lo > t.min_int() && c > t.min_int())
        .then(|| int_node(x.dtype(), -c).bin(Op::CmpLt, x))
}

/// `x != c` as a strict comparison when `c` is `x`'s largest or smallest
/// value (integers): one comparison the index code can reuse.
fn ne_at_edge(x: &Arc<UOp>, k: &Arc<UOp>, c: ConstValue) -> Option<Arc<UOp>> {
    let c = c.as_i128()?;
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
}

/// True if `!c` is rewritten into a comparison by the rules below
/// (`c` is `<` or `<=` of integers or bools, or `==`/`!=` of any type).
/// Rules that would consume such a `!c` in its parent (`where(!c, a, b)`,
/// De Morgan) leave it to these instead, so that the result does not
/// depend on whether the parent or the `NOT` is rewritten first.
pub(super) fn absorbs_not(c: &Arc<UOp>) -> bool {
    match c.op() {
        Op::CmpLt | Op::CmpLe => is_int_or_bool(c.s(0)),
        Op::CmpEq | Op::CmpNe => true,
        _ => false,
    }
}

/// `a <= b` in the form the rules below give it: `a < b + 1` or
/// `a - 1 < b` when a side is an integer constant (and the shifted
/// constant fits), else `a <= b`.
fn le_form(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    let shifted = |k: &Arc<UOp>, by: i128| {
        let v = k.const_int()?.checked_add(by)?;
        (is_int(k) && fits(k.dtype(), (v, v))).then(|| int_node(k.dtype(), v))
    };
    if let Some(b1) = shifted(b, 1) {
        a.bin(Op::CmpLt, &b1)
    } else if let Some(a1) = shifted(a, -1) {
        a1.bin(Op::CmpLt, b)
    } else {
        a.bin(Op::CmpLe, b)
    }
}

/// The negation of comparison `c` in the form the rules give it (see
/// [`absorbs_not`]): `!(a < b)` is `b <= a` in [`le_form`], `!(a <= b)`
/// is `b < a`, `!(a == b)` is `a != b` and back.
pub(super) fn complement(c: &Arc<UOp>) -> Option<Arc<UOp>> {
    if !absorbs_not(c) {
        return None;
    }
    let (a, b) = (c.s(0), c.s(1));
    Some(match c.op() {
        Op::CmpLt => le_form(b, a),
        Op::CmpLe => b.bin(Op::CmpLt, a),
        Op::CmpEq => a.bin(Op::CmpNe, b),
        _ => a.bin(Op::CmpEq, b),
    })
}

/// True if `d` is the negation of comparison `c` (see [`complement`]).
pub(super) fn complementary(c: &Arc<UOp>, d: &Arc<UOp>) -> bool {
    complement(c).is_some_and(|n| Arc::ptr_eq(&n, d))
}

/// Comparison rules.
pub fn compare() -> PatternMatcher {
    patterns! {
        @name "compare";
        // x < x → false for every type (NaN < NaN is false too).
        n @ CmpLt(x, x) ~> bool_of(n, false),
        // x <= x → true and x == x → true for integers and bools (not NaN).
        for op in binary [CmpLe, CmpEq] {
            n @ op(x, x) if is_int_or_bool(x) ~> bool_of(n, true),
        }
        // x != x → false for integers and bools.
        n @ CmpNe(x, x) if is_int_or_bool(x) ~> bool_of(n, false),
        // !(a < b) → b <= a and !(a <= b) → b < a for integers and bools
        // (with a NaN operand both float versions are false).
        Not(CmpLt(a, b)) if is_int_or_bool(a) ~> b.bin(Op::CmpLe, a),
        Not(CmpLe(a, b)) if is_int_or_bool(a) ~> b.bin(Op::CmpLt, a),
        // !(a == b) → a != b and !(a != b) → a == b for every type.
        Not(CmpEq(a, b)) ~> a.bin(Op::CmpNe, b),
        Not(CmpNe(a, b)) ~> a.bin(Op::CmpEq, b),
        // x <= c → x < c + 1 and c <= x → c - 1 < x for integers (when the
        // shifted constant fits): one strict form, which the rules on `<`
        // fold further, for `x <= c`, `!(c < x)` and `x < c + 1` alike.
        CmpLe(x, k @ @const) if is_int(x) && k.const_int().is_some_and(|v| v < x.dtype().scalar_type().max_int()) ~> le_form(x, k),
        CmpLe(k @ @const, x) if is_int(x) && k.const_int().is_some_and(|v| v > x.dtype().scalar_type().min_int()) ~> le_form(k, x),
        // x + c1 < c2 → x < c2 - c1 for integers, when x + c1 cannot wrap
        // and c2 - c1 is representable; c2 < x + c1 → c2 - c1 < x likewise.
        CmpLt(Add[x, @const(c1)], @const(c2)) => {
            let (c1, c2) = (int(x, c1)?, int(x, c2)?);
            shift_ok(x, c1, c2 - c1).then(|| x.bin(Op::CmpLt, &int_node(x.dtype(), c2 - c1)))
        },
        CmpLt(@const(c2), Add[x, @const(c1)]) => {
            let (c1, c2) = (int(x, c1)?, int(x, c2)?);
            shift_ok(x, c1, c2 - c1).then(|| int_node(x.dtype(), c2 - c1).bin(Op::CmpLt, x))
        },
        // x + c1 == c2 → x == c2 - c1 (and !=): adding a constant is a
        // bijection even with wrap-around, so this holds for every integer
        // type; x ^ c1 == c2 → x == c1 ^ c2 likewise (bools too).
        for op in binary [CmpEq, CmpNe] {
            op[Add[x, @const(c1)], @const(c2)] => {
                let k = int(x, c2)? - int(x, c1)?;
                Some(x.bin(op, &int_node(x.dtype(), k)))
            },
        }
        for op in binary [CmpEq, CmpNe] {
            op[Xor[x, @const(c1)], @const(c2)] if is_int_or_bool(x) => {
                let k = c1.as_i128()? ^ c2.as_i128()?;
                Some(x.bin(op, &int_node(x.dtype(), k)))
            },
        }
        // x * c < d → x < ceil(d / c) for integers, c > 0, when x * c cannot wrap.
        CmpLt(Mul[x, @const(c)], @const(d)) => scaled_lt(x, c, d),
        // x // c < d → x < d * c for c, d > 0.
        CmpLt(Idiv(x, @const(c)), @const(d)) => quotient_lt(x, c, d),
        // d < x // c → (d + 1) * c - 1 < x for c > 0, d >= 0.
        CmpLt(@const(d), Idiv(x, @const(c))) => lt_quotient(x, c, d),
        // -x < c → -c < x when neither negation wraps.
        CmpLt(Neg(x), @const(c)) => negated_lt(x, c),
        // x != c → x < c when c is x's largest value, → c < x when smallest.
        CmpNe[x, k @ @const(c)] => ne_at_edge(x, k, c),
    }
}
