//! Boolean algebra on bools and, where the identity is bitwise, on
//! integers: constants, complements, absorption, De Morgan, and comparisons
//! of bools with constants.
//!
//! "All ones" is `true` for bools, `-1` for signed and `MAX` for unsigned
//! integers, so `x & ones = x` holds for both.

use super::compare::{absorbs_not, complementary};
use super::eval::exec_alu;
use super::{all_ones, int_node, is_int_or_bool};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// True if `n` is the all-ones constant of its (integer or bool) type.
fn is_ones(n: &Arc<UOp>) -> bool {
    is_int_or_bool(n) && n.const_int().is_some_and(|v| v == all_ones(n.dtype()))
}

/// Of `x < c1` and `x < c2`, the one with the smaller constant (`keep_min`)
/// or the larger; `None` for NaN constants.
fn tighter(
    l: &Arc<UOp>,
    r: &Arc<UOp>,
    c1: ConstValue,
    c2: ConstValue,
    keep_min: bool,
) -> Option<Arc<UOp>> {
    if c1.as_f64().is_nan() || c2.as_f64().is_nan() {
        return None;
    }
    let le = exec_alu(Op::CmpLe, l.s(1).dtype(), &[c1, c2])? == ConstValue::Bool(true);
    Some(if le == keep_min { l.clone() } else { r.clone() })
}

/// Boolean algebra rules.
pub fn boolean() -> PatternMatcher {
    patterns! {
        @name "boolean";
        // !!x → x (bools and bitwise not on integers).
        n @ Not(Not(x)) if is_int_or_bool(n) ~> x,
        // x & ones → x, x | ones → ones, x ^ ones → !x.
        And[x, c @ @const] if is_ones(c) ~> x,
        Or[_, c @ @const] if is_ones(c) ~> c,
        Xor[x, c @ @const] if is_ones(c) ~> x.un(Op::Not),
        // x & !x → 0, and x | !x → ones, x ^ !x → ones.
        n @ And[x, Not(x)] if is_int_or_bool(n) ~> int_node(n.dtype(), 0),
        for op in binary [Or, Xor] {
            n @ op[x, Not(x)] if is_int_or_bool(n) ~> int_node(n.dtype(), all_ones(n.dtype())),
        }
        // Absorption: x & (x | y) → x and x | (x & y) → x.
        n @ And[x, Or[x, _]] if is_int_or_bool(n) ~> x,
        n @ Or[x, And[x, _]] if is_int_or_bool(n) ~> x,
        // De Morgan: !a & !b → !(a | b) and !a | !b → !(a & b) (one op fewer).
        // Not when a negation is a comparison's to absorb (`absorbs_not`):
        // the `NOT`s may be rewritten first, the result must not differ.
        n @ And(Not(a), Not(b)) if is_int_or_bool(n) && !absorbs_not(a) && !absorbs_not(b)
            ~> a.bin(Op::Or, b).un(Op::Not),
        n @ Or(Not(a), Not(b)) if is_int_or_bool(n) && !absorbs_not(a) && !absorbs_not(b)
            ~> a.bin(Op::And, b).un(Op::Not),
        // !a ^ !b → a ^ b (likewise).
        n @ Xor(Not(a), Not(b)) if is_int_or_bool(n) && !absorbs_not(a) && !absorbs_not(b)
            ~> a.bin(Op::Xor, b),
        // A comparison and its negation in rewritten form (`complement`):
        // c & !c → false, c | !c → true, c ^ !c → true.
        And[c, d] if complementary(c, d) ~> UOp::bool_(false),
        for op in binary [Or, Xor] {
            op[c, d] if complementary(c, d) ~> UOp::bool_(true),
        }
        // Bools compared with constants: x == true → x, x == false → !x,
        // x != false → x, x != true → !x.
        CmpEq[x, @const(c)] if x.dtype().is_bool() ~> {
            if c.truthy() { x.clone() } else { x.un(Op::Not) }
        },
        CmpNe[x, @const(c)] if x.dtype().is_bool() ~> {
            if c.truthy() { x.un(Op::Not) } else { x.clone() }
        },
        // Bool arithmetic is logic: a + b and max(a, b) are a | b; a * b and
        // min(a, b) are a & b.
        for op in binary [Add, Max] {
            n @ op(a, b) if n.dtype().is_bool() ~> a.bin(Op::Or, b),
        }
        for op in binary [Mul, Min] {
            n @ op(a, b) if n.dtype().is_bool() ~> a.bin(Op::And, b),
        }
        // (x < c1) & (x < c2) → x < min(c1, c2), and with | the max (every
        // type: a NaN x makes every side false).
        And(l @ CmpLt(x, @const(c1)), r @ CmpLt(x, @const(c2))) => tighter(l, r, c1, c2, true),
        Or(l @ CmpLt(x, @const(c1)), r @ CmpLt(x, @const(c2))) => tighter(l, r, c1, c2, false),
        // c | !c → true and c & !c → false (a bool is true or false).
        n @ Or[c, Not(c)] if n.dtype().is_bool() ~> UOp::bool_(true),
        n @ And[c, Not(c)] if n.dtype().is_bool() ~> UOp::bool_(false),
    }
}
