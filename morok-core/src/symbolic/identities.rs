//! Algebraic identities: neutral and absorbing elements, self-cancelling
//! and idempotent operations, involutions.
//!
//! Float rules are restricted to the cases IEEE 754 allows: `x + 0` is not
//! `x` for `x = -0` (but `x + -0` is), `x * 0` is not `0` for NaN, inf or
//! negative `x`, and `x - x` is NaN for infinite `x`.

use super::{int_node, is_int, is_int_or_bool};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// True if `c` is exactly `v` (for floats: the same bits, so `0.0` and
/// `-0.0` differ).
fn is(c: ConstValue, v: f64) -> bool {
    match c {
        ConstValue::Float(f) => f.to_bits() == v.to_bits(),
        c => c.as_f64() == v,
    }
}

/// True for the rounding ops, which all return integral values.
fn is_rounding(n: &Arc<UOp>) -> bool {
    matches!(n.op(), Op::Floor | Op::Ceil | Op::Round | Op::Trunc)
}

/// Identity rules.
pub fn identities() -> PatternMatcher {
    patterns! {
        @name "identities";
        // x + 0 → x for integers and bools; for floats only x + (-0.0).
        Add[x, @const(c)] if is(c, if x.dtype().is_float() { -0.0 } else { 0.0 }) ~> x,
        // x - 0 → x (for floats: x - (+0.0), which keeps -0).
        Sub(x, @const(c)) if is(c, 0.0) ~> x,
        // x * 1 → x for every type.
        Mul[x, @one] ~> x,
        // x * 0 → 0 for integers and bools.
        Mul[x, z @ @zero] if is_int_or_bool(x) ~> z,
        // x // 1 → x (integers; for bools, division by true).
        n @ Idiv(x, @one) if is_int_or_bool(n) ~> x,
        // x // -1 → -x for signed integers (MIN // -1 is undefined anyway).
        n @ Idiv(x, @const(c)) if is_int(n) && c.as_i128() == Some(-1) ~> x.un(Op::Neg),
        // x / 1.0 → x for floats.
        Fdiv(x, @one) ~> x,
        // x % 1 → 0 and x % -1 → 0 for integers and bools.
        n @ Mod(_, @const(c)) if is_int_or_bool(n) && matches!(c.as_i128(), Some(1 | -1))
            ~> int_node(n.dtype(), 0),
        // Idempotent ops: x & x → x, x | x → x (integers, bools),
        // max(x, x) → x, min(x, x) → x (every type; NaN stays NaN).
        for op in binary [And, Or, Max, Min] {
            op(x, x) ~> x,
        }
        // x ^ x → 0 and x - x → 0 for integers and bools (not floats: inf - inf).
        for op in binary [Xor, Sub] {
            n @ op(x, x) if is_int_or_bool(n) ~> int_node(n.dtype(), 0),
        }
        // -(-x) → x for every type (wrapping negation is an involution too).
        Neg(Neg(x)) ~> x,
        // -(a - b) → b - a for integers (for floats a = b gives -0 vs +0).
        n @ Neg(Sub(a, b)) if is_int(n) ~> b.bin(Op::Sub, a),
        // -(x + c) → (-c) - x for integers (wrapping negation distributes
        // mod 2^n): the form `-(x - c)` reaches, whichever of `x - c → x +
        // (-c)` and `-(a - b) → b - a` fires first.
        n @ Neg(Add[x, @const(c)]) if is_int(n)
            => Some(int_node(n.dtype(), -c.as_i128()?).bin(Op::Sub, x)),
        // x & 0 → 0 for integers and bools.
        And[x, z @ @zero] if is_int_or_bool(x) ~> z,
        // x | 0 → x and x ^ 0 → x for integers and bools.
        for op in binary [Or, Xor] {
            op[x, @zero] if is_int_or_bool(x) ~> x,
        }
        // x << 0 → x and x >> 0 → x.
        for op in binary [Shl, Shr] {
            op(x, @zero) if is_int(x) ~> x,
        }
        // 0 << s → 0 and 0 >> s → 0 (shifts by the width or more are
        // undefined, so the shift amount does not matter).
        for op in binary [Shl, Shr] {
            op(z @ @zero, _) if is_int(z) ~> z,
        }
        // ||x|| → |x| for every type (|MIN| wraps to MIN, whose |.| is MIN).
        Abs(a @ Abs(_)) ~> a,
        // Rounding an integer or bool is the identity.
        for op in unary [Floor, Ceil, Round, Trunc] {
            op(x) if is_int_or_bool(x) ~> x,
        }
        // Rounding a rounded float changes nothing: every rounding op returns
        // integral values, infinities or NaN, which every rounding op keeps.
        for op in unary [Floor, Ceil, Round, Trunc] {
            op(r) if is_rounding(r) ~> r,
        }
        // isnan(x) → false for integers and bools.
        n @ IsNan(x) if is_int_or_bool(x) ~> UOp::const_(n.dtype(), ConstValue::Bool(false)),
        // fma(a, 1, c) → a + c: with a factor of one the fused and the separate
        // forms round the same exact sum once (every type).
        MulAcc(a, @one, c) ~> a.add(c),
        MulAcc(@one, b, c) ~> b.add(c),
        // a * 0 + c → c for integers.
        n @ MulAcc(a, b, c) if is_int(n) && (a.is_zero_const() || b.is_zero_const()) ~> c,
        // a * b + 0 → a * b for integers.
        n @ MulAcc(a, b, @zero) if is_int(n) ~> a.mul(b),
        // pow(x, 1) → x and pow(x, ±0) → 1 (C's pow: also for NaN x).
        Pow(x, @one) ~> x,
        n @ Pow(_, @zero) if n.dtype().is_float() ~> UOp::one(n.dtype()),
        // (x ^ y) ^ y → x (xor is its own inverse, any integer or bool type).
        Xor[Xor[x, y], y] ~> x,
    }
}
