//! Constant evaluation: the value an ALU op produces on constant operands,
//! with exactly the semantics of the C code the renderer emits on x86-64.
//!
//! The contract every rule and every backend relies on:
//!
//! - **Integers** (i8..i64, u8..u64, `Index` as a 64-bit signed integer)
//!   wrap to their width on `Add`, `Sub`, `Mul`, `Neg`, `MulAcc`, `Shl`
//!   (the C renderer compiles with `-fwrapv`, and narrow types are
//!   truncated after C's integer promotion, which wraps on every compiler
//!   we target). `Idiv` truncates toward zero and `Mod` takes the sign of
//!   the dividend, as C's `/` and `%` do. `Shr` is arithmetic for signed
//!   and logical for unsigned types.
//! - **Undefined or trapping operations are never folded** (the result is
//!   `None`): division or modulo by zero, `MIN / -1` and `MIN % -1` (both
//!   trap in x86's `idiv`), shifts by a negative amount or by at least the
//!   type's width, float-to-int casts of NaN or of values outside the
//!   target's range, and `Threefry` (its bits are left to the device).
//! - **Floats**: `f32` and `f64` are computed in their own precision;
//!   `f16` and `bf16` are computed in `f32` and rounded to the type, as C
//!   does for `_Float16`/`__bf16` without native arithmetic. Transcendental
//!   functions call the platform's libm (the same functions the rendered C
//!   calls). `MulAcc` is a fused multiply-add (`fma`/`fmaf`). `Round` is
//!   round-half-to-even (`rint` in the default rounding mode). `Mod` is
//!   `fmod`.
//! - **NaN**: every comparison with a NaN operand is false except `CmpNe`,
//!   which is true. `Max` and `Min` propagate NaN (IEEE 754-2019
//!   `maximum`/`minimum`: NaN if either operand is NaN, and
//!   `max(-0, +0) = +0`, `min(-0, +0) = -0`); the C renderer must emit the
//!   same, not a bare `a > b ? a : b`. NaN results are canonicalized to one
//!   bit pattern so that folded constants intern to one node.
//! - **Bool**: `Add`/`Or`/`Max` are or, `Mul`/`And`/`Min` are and,
//!   `Sub`/`Xor`/`CmpNe` are xor, `Neg`/`Not` are not, `false < true`.
//!
//! Ops on vector dtypes are evaluated lane-wise by callers; here `dtype`
//! contributes only its scalar type.
//!
//! This is the one definition of scalar ALU semantics. The test oracles
//! (the reference evaluator and the kernel interpreter) call
//! [`exec_alu_with`] with [`Undefined::Define`]: they compute floats in
//! f64 (rounding each result to its type) and need a value for every
//! operation, so undefined cases get the fixed values listed there.

use crate::dtype::{DType, ScalarType};
use crate::random::threefry2x32;
use crate::uop::op::{round_to_float, wrap_i, wrap_u};
use crate::uop::{ConstValue, Op, OpGroup};

extern "C" {
    // The error function is in C99's libm but not in Rust's `std`; the
    // rendered C calls these very functions, so folding through them keeps
    // folded and computed values identical.
    fn erf(x: f64) -> f64;
    fn erff(x: f32) -> f32;
}

/// The error function of C99's libm (the one the rendered C calls).
#[cfg(test)]
pub fn erf_f64(x: f64) -> f64 {
    // SAFETY: `erf` is a pure libm function of one float.
    unsafe { erf(x) }
}

/// What an evaluation does with operations whose C result is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undefined {
    /// Give no result (`None`): constant folding never folds them.
    Decline,
    /// Give a fixed result, and compute every float type in f64 (rounded
    /// to the type): the test oracles. Integer `x / 0` and `x % 0` are 0
    /// (bool: false), `MIN / -1` wraps to `MIN`, a left shift by a
    /// negative amount or by at least the width gives 0, a right shift by
    /// a negative amount gives `x` and by at least the width the sign;
    /// `Threefry` is [`threefry2x32`]; float `Idiv` is the truncated
    /// quotient.
    Define,
}

/// Evaluates an ALU op on constants.
///
/// `dtype` is the type the op computes in: the operands' type for
/// comparisons and `IsNan` (whose result is bool), the branches' type for
/// `Where`, and the result type otherwise. Operands are read in the
/// canonical representation of that type (integers are wrapped, floats
/// rounded to it first; `Where`'s condition is read as a truth value).
///
/// Returns `None` when the op is not an ALU op, the number of operands is
/// wrong, the op is not defined on the type (`Fdiv` on integers, `Shl` on
/// floats, ...), or the C result would be undefined or trapping (see the
/// module docs). A `None` means "do not fold", never "the result is zero".
pub fn exec_alu(op: Op, dtype: DType, args: &[ConstValue]) -> Option<ConstValue> {
    exec_alu_with(op, dtype, args, Undefined::Decline)
}

/// [`exec_alu`] with a choice of what undefined operations give (see
/// [`Undefined`]).
pub fn exec_alu_with(
    op: Op,
    dtype: DType,
    args: &[ConstValue],
    undefined: Undefined,
) -> Option<ConstValue> {
    let define = undefined == Undefined::Define;
    let arity = match op.group() {
        OpGroup::Unary => 1,
        OpGroup::Binary => 2,
        OpGroup::Ternary => 3,
        _ => return None,
    };
    if args.len() != arity {
        return None;
    }
    if op == Op::Where {
        // Only the selected branch matters; both are already of type `dtype`.
        let pick = if args[0].truthy() { args[1] } else { args[2] };
        return Some(canonical(pick, dtype.scalar_type()));
    }
    let t = dtype.scalar_type();
    if t.is_bool() {
        let v: Vec<bool> = args.iter().map(|a| a.truthy()).collect();
        return exec_bool(op, &v, define).map(ConstValue::Bool);
    }
    if t.is_int() {
        let v: Vec<i128> = args
            .iter()
            .map(|a| int_value(*a, t))
            .collect::<Option<_>>()?;
        return exec_int(op, t, &v, define);
    }
    match t {
        ScalarType::F64 => {
            let v: Vec<f64> = args.iter().map(|a| a.as_f64()).collect();
            exec_f64(op, &v, define)
        }
        t if t.is_float() && define => {
            let v: Vec<f64> = args.iter().map(|a| a.as_f64()).collect();
            exec_f64(op, &v, define).map(|r| match r {
                ConstValue::Float(f) => ConstValue::Float(round_to_float(f, t)),
                other => other,
            })
        }
        ScalarType::F32 | ScalarType::F16 | ScalarType::BF16 => {
            // Operands are rounded to their type, which f32 holds exactly.
            let v: Vec<f32> = args
                .iter()
                .map(|a| round_to_float(a.as_f64(), t) as f32)
                .collect();
            exec_f32(op, &v, define).map(|r| match r {
                ConstValue::Float(f) => ConstValue::Float(canonical_nan(round_to_float(f, t))),
                other => other,
            })
        }
        _ => None,
    }
}

/// The canonical representation of `v` in type `t`: integers wrapped to
/// the width, floats rounded to the precision (NaN canonicalized), bools
/// as truth values.
fn canonical(v: ConstValue, t: ScalarType) -> ConstValue {
    match t {
        ScalarType::Bool => ConstValue::Bool(v.truthy()),
        t if t.is_float() => ConstValue::Float(canonical_nan(round_to_float(v.as_f64(), t))),
        t => ConstValue::from_f64_or_int(v, t),
    }
}

/// An operand of an integer op, wrapped to the type (floats are rejected).
fn int_value(v: ConstValue, t: ScalarType) -> Option<i128> {
    let i = v.as_i128()?;
    Some(if t.is_unsigned() {
        wrap_u(i, t) as i128
    } else {
        wrap_i(i, t) as i128
    })
}

/// Wraps an exact (or mod-2^128) integer result to the type.
fn wrap(v: i128, t: ScalarType) -> ConstValue {
    ConstValue::from_i128(v, t)
}

/// Replaces every NaN by the one canonical NaN.
fn canonical_nan(f: f64) -> f64 {
    if f.is_nan() {
        f64::NAN
    } else {
        f
    }
}

fn exec_bool(op: Op, v: &[bool], define: bool) -> Option<bool> {
    Some(match (op, v) {
        (Op::Not | Op::Neg, [a]) => !a,
        (Op::Abs | Op::Floor | Op::Ceil | Op::Round | Op::Trunc, [a]) => *a,
        (Op::IsNan, [_]) => false,
        (Op::Add | Op::Or | Op::Max, [a, b]) => a | b,
        (Op::Mul | Op::And | Op::Min, [a, b]) => a & b,
        (Op::Sub | Op::Xor | Op::CmpNe, [a, b]) => a ^ b,
        (Op::CmpEq, [a, b]) => a == b,
        (Op::CmpLt, [a, b]) => !a & b,
        (Op::CmpLe, [a, b]) => !a | b,
        // Division by true is the identity; by false it is undefined.
        (Op::Idiv, [a, true]) => *a,
        (Op::Mod, [_, true]) => false,
        (Op::Idiv | Op::Mod, [_, false]) if define => false,
        (Op::MulAcc, [a, b, c]) => (a & b) | c,
        _ => return None,
    })
}

fn exec_int(op: Op, t: ScalarType, v: &[i128], define: bool) -> Option<ConstValue> {
    let bits = t.bits() as i128;
    let signed_min = t.is_signed_int().then(|| t.min_int());
    let r = match (op, v) {
        (Op::Neg, [a]) => a.wrapping_neg(),
        (Op::Not, [a]) => !a,
        (Op::Abs, [a]) => a.wrapping_abs(),
        (Op::Floor | Op::Ceil | Op::Round | Op::Trunc, [a]) => *a,
        (Op::IsNan, [_]) => return Some(ConstValue::Bool(false)),
        (Op::Add, [a, b]) => a.wrapping_add(*b),
        (Op::Sub, [a, b]) => a.wrapping_sub(*b),
        (Op::Mul, [a, b]) => a.wrapping_mul(*b),
        (Op::Idiv | Op::Mod, [_, 0]) if define => 0,
        (Op::Idiv | Op::Mod, [a, b]) => {
            // Operands are within 64 bits, so `MIN / -1` is exact in i128
            // (and wraps below when defined).
            if *b == 0 || (Some(*a) == signed_min && *b == -1 && !define) {
                return None;
            }
            // Rust's i128 `/` and `%` truncate toward zero, like C's.
            if op == Op::Idiv {
                a / b
            } else {
                a % b
            }
        }
        (Op::Max, [a, b]) => *a.max(b),
        (Op::Min, [a, b]) => *a.min(b),
        (Op::CmpLt, [a, b]) => return Some(ConstValue::Bool(a < b)),
        (Op::CmpLe, [a, b]) => return Some(ConstValue::Bool(a <= b)),
        (Op::CmpEq, [a, b]) => return Some(ConstValue::Bool(a == b)),
        (Op::CmpNe, [a, b]) => return Some(ConstValue::Bool(a != b)),
        (Op::And, [a, b]) => a & b,
        (Op::Or, [a, b]) => a | b,
        (Op::Xor, [a, b]) => a ^ b,
        (Op::Shl, [_, b]) if define && (*b < 0 || *b >= bits) => 0,
        (Op::Shr, [a, b]) if define && *b < 0 => *a,
        (Op::Shr, [a, b]) if define && *b >= bits => a >> 127,
        (Op::Shl | Op::Shr, [a, b]) => {
            if *b < 0 || *b >= bits {
                return None;
            }
            // `a` is within 64 bits, so `a << b` (b < 64) is exact in i128;
            // `>>` on i128 is arithmetic, and unsigned values are non-negative.
            if op == Op::Shl {
                a << b
            } else {
                a >> b
            }
        }
        (Op::MulAcc, [a, b, c]) => a.wrapping_mul(*b).wrapping_add(*c),
        (Op::Threefry, [a, b]) if define => threefry2x32(*a as u64, *b as u64) as i128,
        _ => return None,
    };
    Some(wrap(r, t))
}

/// Float evaluation, generated for f32 and f64 from one body so that both
/// precisions have identical semantics.
macro_rules! float_exec {
    ($name:ident, $t:ty, $erf:ident) => {
        fn $name(op: Op, v: &[$t], define: bool) -> Option<ConstValue> {
            let f = |x: $t| Some(ConstValue::Float(canonical_nan(x as f64)));
            let b = |x: bool| Some(ConstValue::Bool(x));
            match (op, v) {
                (Op::Neg, [a]) => f(-a),
                (Op::Abs, [a]) => f(a.abs()),
                (Op::Sqrt, [a]) => f(a.sqrt()),
                (Op::Rsqrt, [a]) => f(1.0 / a.sqrt()),
                (Op::Recip, [a]) => f(1.0 / a),
                (Op::Exp, [a]) => f(a.exp()),
                (Op::Exp2, [a]) => f(a.exp2()),
                (Op::Log, [a]) => f(a.ln()),
                (Op::Log2, [a]) => f(a.log2()),
                (Op::Sin, [a]) => f(a.sin()),
                (Op::Cos, [a]) => f(a.cos()),
                (Op::Tan, [a]) => f(a.tan()),
                (Op::Tanh, [a]) => f(a.tanh()),
                // SAFETY: `erf`/`erff` are pure libm functions of one float.
                (Op::Erf, [a]) => f(unsafe { $erf(*a) }),
                (Op::Floor, [a]) => f(a.floor()),
                (Op::Ceil, [a]) => f(a.ceil()),
                (Op::Round, [a]) => f(a.round_ties_even()),
                (Op::Trunc, [a]) => f(a.trunc()),
                (Op::IsNan, [a]) => b(a.is_nan()),
                (Op::Add, [x, y]) => f(x + y),
                (Op::Sub, [x, y]) => f(x - y),
                (Op::Mul, [x, y]) => f(x * y),
                (Op::Fdiv, [x, y]) => f(x / y),
                (Op::Mod, [x, y]) => f(x % y),
                (Op::Idiv, [x, y]) if define => f((x / y).trunc()),
                (Op::Pow, [x, y]) => f(x.powf(*y)),
                (Op::Max | Op::Min, [x, y]) => {
                    if x.is_nan() || y.is_nan() {
                        f(<$t>::NAN)
                    } else if x == y {
                        // Equal values differ at most in the sign of zero:
                        // max prefers +0 and min prefers -0.
                        let neg = if op == Op::Max {
                            x.is_sign_negative() && y.is_sign_negative()
                        } else {
                            x.is_sign_negative() || y.is_sign_negative()
                        };
                        f(if neg { -x.abs() } else { x.abs() })
                    } else if (op == Op::Max) == (x > y) {
                        f(*x)
                    } else {
                        f(*y)
                    }
                }
                (Op::CmpLt, [x, y]) => b(x < y),
                (Op::CmpLe, [x, y]) => b(x <= y),
                (Op::CmpEq, [x, y]) => b(x == y),
                (Op::CmpNe, [x, y]) => b(x != y),
                (Op::MulAcc, [x, y, z]) => f(x.mul_add(*y, *z)),
                _ => None,
            }
        }
    };
}

float_exec!(exec_f32, f32, erff);
float_exec!(exec_f64, f64, erf);

/// Converts a constant to `to` with C's conversion semantics (`(T)v`):
///
/// - to bool: non-zero (NaN included) is true;
/// - int or bool to int: wraps to the target's width;
/// - float to int: truncates toward zero; `None` for NaN and for values
///   whose truncation is outside the target's range (undefined in C);
/// - to float: rounds to nearest-even once, directly from the exact
///   source value (no double rounding through f64 for f16/bf16).
pub fn cast_const(v: ConstValue, to: DType) -> Option<ConstValue> {
    cast_with(v, to, Undefined::Decline)
}

/// `CAST` of `v` to `to` with the given treatment of C's undefined case, a
/// float → integer conversion out of the target's range or of NaN:
/// [`Undefined::Decline`] gives `None`, [`Undefined::Define`] saturates to
/// the type's range with NaN → 0 (Rust's `as`, what the CPU backends
/// render). The one cast semantics of constant folding and the oracles.
pub fn cast_with(v: ConstValue, to: DType, undefined: Undefined) -> Option<ConstValue> {
    let t = to.scalar_type();
    match (v, t) {
        (_, ScalarType::Void) => None,
        (_, ScalarType::Bool) => Some(ConstValue::Bool(v.truthy())),
        (ConstValue::Float(f), t) if t.is_int() => {
            let tr = f.trunc();
            // `max_f64() + 1` is exact below 64 bits; for 64-bit types
            // `max_f64()` is already the exclusive bound 2^63 or 2^64.
            if f.is_nan() || tr < t.min_f64() || tr >= t.max_f64() + 1.0 {
                return match undefined {
                    Undefined::Decline => None,
                    Undefined::Define if f.is_nan() => Some(ConstValue::from_i128(0, t)),
                    Undefined::Define => Some(ConstValue::from_i128(
                        (tr as i128).clamp(t.min_int(), t.max_int()),
                        t,
                    )),
                };
            }
            Some(ConstValue::from_i128(tr as i128, t))
        }
        (ConstValue::Float(f), t) => Some(ConstValue::Float(canonical_nan(round_to_float(f, t)))),
        (_, t) if t.is_int() => Some(wrap(v.as_i128()?, t)),
        (_, t) => Some(ConstValue::Float(int_to_float(v.as_i128()?, t))),
    }
}

/// Rounds an integer to the nearest value of a float type (ties to even),
/// in one rounding step.
fn int_to_float(v: i128, t: ScalarType) -> f64 {
    match t {
        ScalarType::F64 => v as f64,
        ScalarType::F32 => v as f32 as f64,
        // 11 (f16) or 8 (bf16) significant bits: round the integer itself,
        // after which the value is exact in f64 and converts exactly (or
        // overflows to infinity, as the C conversion does).
        ScalarType::F16 => half::f16::from_f64(round_significant(v, 11)).to_f64(),
        _ => half::bf16::from_f64(round_significant(v, 8)).to_f64(),
    }
}

/// `v` rounded to `p` significant bits (ties to even), as an f64.
fn round_significant(v: i128, p: u32) -> f64 {
    let mag = v.unsigned_abs();
    let len = 128 - mag.leading_zeros();
    let rounded = if len <= p {
        mag
    } else {
        let shift = len - p;
        let q = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && q & 1 == 1);
        (q + up as u128) << shift
    };
    let f = rounded as f64; // at most p+1 significant bits: exact
    if v < 0 {
        -f
    } else {
        f
    }
}

/// Reinterprets the bits of a constant of type `from` as type `to` (same
/// size). `None` for different sizes, for bool, and when the result is a
/// NaN (constants canonicalize NaN, which would lose the payload).
pub fn bitcast_const(v: ConstValue, from: ScalarType, to: ScalarType) -> Option<ConstValue> {
    let scalar = |t: ScalarType| t.is_float() || t.is_int();
    if from.itemsize() != to.itemsize() || !scalar(from) || !scalar(to) {
        return None;
    }
    let out = value_of_bits(bits_of(v, from)?, to);
    (!matches!(out, ConstValue::Float(f) if f.is_nan())).then_some(out)
}

/// The bits of `v` stored as type `t` (its low `t.bits()` bits): a float
/// is rounded to the type first, an integer wrapped. `None` for a float
/// value of an integer type. The one bit layout of every scalar type,
/// shared by constant folding and the test oracles.
pub fn bits_of(v: ConstValue, t: ScalarType) -> Option<u64> {
    Some(match t {
        ScalarType::F64 => v.as_f64().to_bits(),
        ScalarType::F32 => (v.as_f64() as f32).to_bits() as u64,
        ScalarType::F16 => half::f16::from_f64(v.as_f64()).to_bits() as u64,
        ScalarType::BF16 => half::bf16::from_f64(v.as_f64()).to_bits() as u64,
        t => wrap_u(v.as_i128()?, ScalarType::U64) & width_mask(t),
    })
}

/// The value of type `t` whose bits are the low `t.bits()` bits of `bits`
/// (NaN payloads are not kept: f64 NaNs compare as NaN anyway).
pub fn value_of_bits(bits: u64, t: ScalarType) -> ConstValue {
    let bits = bits & width_mask(t);
    match t {
        ScalarType::F64 => ConstValue::Float(f64::from_bits(bits)),
        ScalarType::F32 => ConstValue::Float(f32::from_bits(bits as u32) as f64),
        ScalarType::F16 => ConstValue::Float(half::f16::from_bits(bits as u16).to_f64()),
        ScalarType::BF16 => ConstValue::Float(half::bf16::from_bits(bits as u16).to_f64()),
        t => ConstValue::from_i128(bits as i128, t),
    }
}

fn width_mask(t: ScalarType) -> u64 {
    if t.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConstValue::{Bool, Float, Int, UInt};

    fn ex(op: Op, dtype: DType, args: &[ConstValue]) -> Option<ConstValue> {
        exec_alu(op, dtype, args)
    }

    #[test]
    fn integer_division_truncates_and_mod_follows_the_dividend() {
        assert_eq!(ex(Op::Idiv, DType::I32, &[Int(-7), Int(2)]), Some(Int(-3)));
        assert_eq!(ex(Op::Mod, DType::I32, &[Int(-7), Int(2)]), Some(Int(-1)));
        assert_eq!(ex(Op::Mod, DType::I32, &[Int(7), Int(-2)]), Some(Int(1)));
        assert_eq!(
            ex(Op::Idiv, DType::INDEX, &[Int(7), Int(-2)]),
            Some(Int(-3))
        );
        assert_eq!(
            ex(Op::Idiv, DType::U8, &[UInt(200), UInt(7)]),
            Some(UInt(28))
        );
    }

    #[test]
    fn undefined_operations_do_not_fold() {
        for t in [DType::I8, DType::I32, DType::I64, DType::INDEX, DType::U16] {
            assert_eq!(ex(Op::Idiv, t, &[Int(3), Int(0)]), None);
            assert_eq!(ex(Op::Mod, t, &[Int(3), Int(0)]), None);
            let bits = t.scalar_type().bits() as i64;
            assert_eq!(ex(Op::Shl, t, &[Int(1), Int(bits)]), None);
            assert_eq!(ex(Op::Shr, t, &[Int(1), Int(-1)]), None);
        }
        assert_eq!(ex(Op::Idiv, DType::I8, &[Int(-128), Int(-1)]), None);
        assert_eq!(ex(Op::Mod, DType::I64, &[Int(i64::MIN), Int(-1)]), None);
        assert_eq!(ex(Op::Idiv, DType::BOOL, &[Bool(true), Bool(false)]), None);
        assert_eq!(ex(Op::Threefry, DType::U64, &[UInt(1), UInt(2)]), None);
        assert_eq!(ex(Op::Fdiv, DType::I32, &[Int(1), Int(2)]), None);
        assert_eq!(ex(Op::Shl, DType::F32, &[Float(1.0), Float(2.0)]), None);
        assert_eq!(ex(Op::Add, DType::I32, &[Int(1)]), None);
    }

    #[test]
    fn integers_wrap_to_their_width() {
        assert_eq!(ex(Op::Add, DType::I8, &[Int(127), Int(1)]), Some(Int(-128)));
        assert_eq!(ex(Op::Mul, DType::U8, &[UInt(16), UInt(16)]), Some(UInt(0)));
        assert_eq!(
            ex(Op::Sub, DType::U32, &[UInt(0), UInt(1)]),
            Some(UInt(u32::MAX as u64))
        );
        assert_eq!(ex(Op::Neg, DType::I16, &[Int(-32768)]), Some(Int(-32768)));
        assert_eq!(ex(Op::Not, DType::U8, &[UInt(5)]), Some(UInt(250)));
        assert_eq!(ex(Op::Shl, DType::I8, &[Int(1), Int(7)]), Some(Int(-128)));
        assert_eq!(ex(Op::Shr, DType::I8, &[Int(-128), Int(7)]), Some(Int(-1)));
        assert_eq!(ex(Op::Shr, DType::U8, &[UInt(128), UInt(7)]), Some(UInt(1)));
        assert_eq!(
            ex(
                Op::MulAcc,
                DType::U64,
                &[UInt(u64::MAX), UInt(u64::MAX), UInt(1)]
            ),
            Some(UInt(2))
        );
        assert_eq!(ex(Op::Abs, DType::I8, &[Int(-128)]), Some(Int(-128)));
    }

    #[test]
    fn nan_comparisons_and_nan_propagating_max_min() {
        let nan = Float(f64::NAN);
        for t in [DType::F16, DType::BF16, DType::F32, DType::F64] {
            for op in [Op::CmpLt, Op::CmpLe, Op::CmpEq] {
                assert_eq!(ex(op, t, &[nan, Float(1.0)]), Some(Bool(false)));
            }
            assert_eq!(ex(Op::CmpNe, t, &[nan, nan]), Some(Bool(true)));
            let m = ex(Op::Max, t, &[Float(1.0), nan]).unwrap();
            assert!(m.as_f64().is_nan());
            let m = ex(Op::Min, t, &[nan, Float(1.0)]).unwrap();
            assert!(m.as_f64().is_nan());
            let z = ex(Op::Max, t, &[Float(-0.0), Float(0.0)]).unwrap().as_f64();
            assert!(z == 0.0 && z.is_sign_positive());
            let z = ex(Op::Min, t, &[Float(0.0), Float(-0.0)]).unwrap().as_f64();
            assert!(z == 0.0 && z.is_sign_negative());
            assert_eq!(ex(Op::Max, t, &[Float(2.0), Float(-3.0)]), Some(Float(2.0)));
            assert_eq!(
                ex(Op::Min, t, &[Float(2.0), Float(-3.0)]),
                Some(Float(-3.0))
            );
        }
    }

    #[test]
    fn narrow_floats_round_to_their_type() {
        // 1 + 2^-11 is not an f16: it rounds to 1 (ties to even).
        let r = ex(Op::Add, DType::F16, &[Float(1.0), Float(2f64.powi(-11))]).unwrap();
        assert_eq!(r, Float(1.0));
        let r = ex(Op::Mul, DType::F16, &[Float(300.0), Float(300.0)]).unwrap();
        assert_eq!(r, Float(f64::INFINITY));
        let r = ex(Op::Add, DType::BF16, &[Float(256.0), Float(1.0)]).unwrap();
        assert_eq!(r, Float(256.0));
        // f32 arithmetic is not f64 arithmetic.
        let r = ex(Op::Add, DType::F32, &[Float(16777216.0), Float(1.0)]).unwrap();
        assert_eq!(r, Float(16777216.0));
        let r = ex(Op::Fdiv, DType::F32, &[Float(1.0), Float(3.0)]).unwrap();
        assert_eq!(r, Float((1.0f32 / 3.0) as f64));
        let r = ex(Op::Fdiv, DType::F64, &[Float(1.0), Float(0.0)]).unwrap();
        assert_eq!(r, Float(f64::INFINITY));
        let r = ex(Op::Round, DType::F32, &[Float(2.5)]).unwrap();
        assert_eq!(r, Float(2.0));
        let r = ex(Op::Erf, DType::F64, &[Float(0.0)]).unwrap();
        assert_eq!(r, Float(0.0));
        let r = ex(Op::Mod, DType::F32, &[Float(-7.5), Float(2.0)]).unwrap();
        assert_eq!(r, Float(-1.5));
    }

    #[test]
    fn bool_semantics() {
        let (t, f) = (Bool(true), Bool(false));
        assert_eq!(ex(Op::Add, DType::BOOL, &[t, t]), Some(t));
        assert_eq!(ex(Op::Sub, DType::BOOL, &[t, t]), Some(f));
        assert_eq!(ex(Op::Mul, DType::BOOL, &[t, f]), Some(f));
        assert_eq!(ex(Op::CmpLt, DType::BOOL, &[f, t]), Some(t));
        assert_eq!(ex(Op::Neg, DType::BOOL, &[t]), Some(f));
        assert_eq!(
            ex(Op::Where, DType::I32, &[t, Int(1), Int(2)]),
            Some(Int(1))
        );
        assert_eq!(
            ex(Op::Where, DType::F32, &[f, Float(1.0), Float(2.5)]),
            Some(Float(2.5))
        );
    }

    #[test]
    fn casts_follow_c() {
        assert_eq!(cast_const(Int(300), DType::U8), Some(UInt(44)));
        assert_eq!(cast_const(Int(-1), DType::U16), Some(UInt(65535)));
        assert_eq!(cast_const(UInt(255), DType::I8), Some(Int(-1)));
        assert_eq!(cast_const(Float(-2.7), DType::I32), Some(Int(-2)));
        assert_eq!(cast_const(Float(-0.9), DType::U8), Some(UInt(0)));
        assert_eq!(cast_const(Float(256.0), DType::U8), None);
        assert_eq!(cast_const(Float(-1.0), DType::U32), None);
        assert_eq!(cast_const(Float(f64::NAN), DType::I64), None);
        assert_eq!(cast_const(Float(9.3e18), DType::I64), None);
        assert_eq!(
            cast_const(Float(9.2e18), DType::I64),
            Some(Int(9_200_000_000_000_000_000))
        );
        assert_eq!(cast_const(Float(f64::NAN), DType::BOOL), Some(Bool(true)));
        assert_eq!(cast_const(Bool(true), DType::F32), Some(Float(1.0)));
        assert_eq!(
            cast_const(Float(0.1), DType::F32),
            Some(Float(0.1f32 as f64))
        );
        // 2049 is a tie between the f16 neighbours 2048 and 2050: to even.
        assert_eq!(cast_const(Int(2049), DType::F16), Some(Float(2048.0)));
        assert_eq!(cast_const(Int(2051), DType::F16), Some(Float(2052.0)));
        assert_eq!(
            cast_const(Int(65520), DType::F16),
            Some(Float(f64::INFINITY))
        );
        // Single rounding: 2^60 + 2^52 + 1 rounds up in bf16; via f64 it
        // would first become 2^60 + 2^52 (a tie) and then round to even.
        let v = (1i64 << 60) + (1i64 << 52) + 1;
        let expect = 2f64.powi(60) + 2f64.powi(53);
        assert_eq!(cast_const(Int(v), DType::BF16), Some(Float(expect)));
        assert_eq!(
            cast_const(UInt(u64::MAX), DType::F32),
            Some(Float(2f64.powi(64)))
        );
    }

    #[test]
    fn bitcasts_reinterpret_bits() {
        use ScalarType::*;
        assert_eq!(bitcast_const(Float(1.0), F32, U32), Some(UInt(0x3f80_0000)));
        assert_eq!(bitcast_const(Int(-1), I16, U16), Some(UInt(0xffff)));
        assert_eq!(bitcast_const(UInt(0x3c00), U16, F16), Some(Float(1.0)));
        assert_eq!(bitcast_const(Int(-1), I32, F32), None);
        assert_eq!(bitcast_const(Float(1.0), F32, I64), None);
    }
}
