//! Decompositions: ops a target cannot express become ops it can.
//!
//! The mandatory set runs for every target, because no renderer has these
//! ops as primitives: `THREEFRY`, `ISNAN`, integer `POW`, float `IDIV`,
//! arithmetic on `bool`, and the saturating float → integer `CAST`. The transcendental set
//! ([`super::transcendental`]) runs per op the target lacks ([`Caps`]).

use super::transcendental;
use super::LowerError;
use crate::caps::Caps;
use crate::dtype::DType;
use crate::dtype::ScalarType;
use crate::rewrite::{graph_rewrite, PatternMatcher};
use crate::uop::op::round_to_float;
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// Applies the mandatory and the (per `caps`) transcendental
/// decompositions to a fixpoint.
pub fn decompose(g: &Arc<UOp>, caps: &Caps) -> Result<Arc<UOp>, LowerError> {
    let pm = mandatory().combined(&transcendental::rules(caps), "decompositions");
    Ok(graph_rewrite(&pm, g, &mut ())?)
}

/// A u32 constant.
fn u32c(v: u32) -> Arc<UOp> {
    UOp::const_(DType::U32, ConstValue::UInt(v as u64))
}

/// `rotl(x, r)` on u32: `(x << r) | (x >> (32 - r))`, `0 < r < 32`.
fn rotl32(x: &Arc<UOp>, r: u32) -> Arc<UOp> {
    x.bin(Op::Shl, &u32c(r))
        .bin(Op::Or, &x.bin(Op::Shr, &u32c(32 - r)))
}

/// `THREEFRY(x, key)` (u64) → the 20 rounds of threefry-2x32 on u32 words,
/// exactly as [`crate::random::threefry2x32`] computes them: u32 `ADD` wraps like
/// `wrapping_add`, the rotations are shift pairs, the key schedule is
/// built from the key's words and [`crate::random::PARITY`].
fn threefry(x: &Arc<UOp>, key: &Arc<UOp>) -> Arc<UOp> {
    let c32 = UOp::const_(DType::U64, ConstValue::UInt(32));
    let lo = |v: &Arc<UOp>| v.cast(DType::U32);
    let hi = |v: &Arc<UOp>| v.bin(Op::Shr, &c32).cast(DType::U32);
    let (k0, k1) = (lo(key), hi(key));
    let ks = [
        k0.clone(),
        k1.clone(),
        k0.bin(Op::Xor, &k1)
            .bin(Op::Xor, &u32c(crate::random::PARITY)),
    ];
    let mut x0 = lo(x).add(&ks[0]);
    let mut x1 = hi(x).add(&ks[1]);
    for round in 0..crate::random::ROUNDS {
        x0 = x0.add(&x1);
        x1 = rotl32(&x1, crate::random::ROTATIONS[round % 8]).bin(Op::Xor, &x0);
        if round % 4 == 3 {
            let s = round / 4 + 1;
            x0 = x0.add(&ks[s % 3]);
            x1 = x1.add(&ks[(s + 1) % 3]).add(&u32c(s as u32));
        }
    }
    x1.cast(DType::U64)
        .bin(Op::Shl, &c32)
        .bin(Op::Or, &x0.cast(DType::U64))
}

/// Integer `POW(b, e)` by square-and-multiply over every bit of `e`
/// (unrolled, since the IR has no loops here): `r` picks up `b^(2^i)` when
/// bit `i` of `e` is set. Wrapping multiplication matches repeated
/// multiplication modulo 2^bits. A negative exponent gives the truncated
/// value of `1 / b^|e|`: 1 for `b = 1`, ±1 for `b = -1` by parity, else 0.
fn int_pow(b: &Arc<UOp>, e: &Arc<UOp>) -> Arc<UOp> {
    let dt = b.dtype();
    let one = UOp::one(dt);
    let zero = UOp::zero(dt);
    let (mut r, mut p) = (one.clone(), b.clone());
    for i in 0..dt.scalar_type().bits() {
        let bit = e
            .bin(Op::Shr, &UOp::const_(dt, ConstValue::Int(i as i64)))
            .bin(Op::And, &one)
            .bin(Op::CmpNe, &zero);
        r = bit.where_(&r.mul(&p), &r);
        p = p.mul(&p);
    }
    if !dt.scalar_type().is_signed_int() {
        return r;
    }
    let minus_one = UOp::const_(dt, ConstValue::Int(-1));
    let odd = e.bin(Op::And, &one).bin(Op::CmpNe, &zero);
    let neg_case = b.bin(Op::CmpEq, &one).where_(
        &one,
        &b.bin(Op::CmpEq, &minus_one)
            .where_(&odd.where_(&minus_one, &one), &zero),
    );
    e.bin(Op::CmpLt, &zero).where_(&neg_case, &r)
}

/// The largest finite value of float type `f`.
fn float_max(f: ScalarType) -> f64 {
    match f {
        ScalarType::F16 => half::f16::MAX.to_f64(),
        ScalarType::BF16 => half::bf16::MAX.to_f64(),
        ScalarType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// The value of float type `f` nearest to the integer `m` on the side of
/// zero (`m` itself when `f` holds it), within `f`'s finite range.
fn float_toward_zero(m: f64, f: ScalarType) -> f64 {
    let r = round_to_float(m.clamp(-float_max(f), float_max(f)), f);
    if r.abs() <= m.abs() {
        return r;
    }
    // `r` rounded away from zero: step back one unit in the last place of
    // the binade below `|r|` (`|r|` is then a power of two or inside a
    // binade; either way that unit is the gap below it).
    let bits = match f {
        ScalarType::F16 => 11,
        ScalarType::BF16 => 8,
        ScalarType::F32 => 24,
        _ => 53,
    };
    let below = (r.abs() * (1.0 - f64::EPSILON)).log2().floor() as i32;
    r - r.signum() * 2f64.powi(below + 1 - bits)
}

/// `CAST(x)` from a float to an integer type → the saturating conversion
/// Rust's `as` performs: NaN gives 0, a value below the type's range its
/// minimum, above it its maximum, anything else its truncation. C leaves an
/// out-of-range conversion undefined and LLVM makes it poison, so the cast
/// gets an operand it can convert: `cast(min(max(isnan(x) ? 0 : x, lo),
/// hi))`, `lo` and `hi` the float values nearest the type's ends within
/// its range; where the float type cannot hold an end exactly (`i32::MAX`
/// in f32, say), a comparison with that bound selects the end itself. The
/// reference evaluator defines the conversion the same way. `None` when
/// the operand is already such a clamp (the rule's own output).
fn saturating_cast(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let x = n.s(0);
    let (from, to) = (x.dtype().scalar_type(), n.dtype().scalar_type());
    if !from.is_float() || !to.is_int() || n.dtype().is_vector() {
        return None;
    }
    let lo = float_toward_zero(to.min_int() as f64, from);
    let hi = float_toward_zero(to.max_int() as f64, from);
    let c = |v: f64| UOp::const_f64(x.dtype(), v);
    let const_at = |u: &Arc<UOp>| u.const_value().map(|v| v.as_f64());
    if x.op() == Op::Min && x.s(0).op() == Op::Max {
        let inner = (const_at(x.s(0).s(1)), const_at(x.s(1)));
        if let (Some(a), Some(b)) = inner {
            if a >= lo && b <= hi {
                return None;
            }
        }
    }
    let not_nan = x.bin(Op::CmpNe, x).where_(&c(0.0), x);
    let clamped = not_nan.bin(Op::Max, &c(lo)).bin(Op::Min, &c(hi));
    let mut out = clamped.cast(n.dtype());
    let end = |v: i128| UOp::const_(n.dtype(), ConstValue::from_i128(v, to));
    if (hi as i128) < to.max_int() {
        out = c(hi).bin(Op::CmpLt, x).where_(&end(to.max_int()), &out);
    }
    if (lo as i128) > to.min_int() {
        out = x.bin(Op::CmpLt, &c(lo)).where_(&end(to.min_int()), &out);
    }
    Some(out)
}

/// The decompositions every target needs.
pub fn mandatory() -> PatternMatcher {
    let mut pm = PatternMatcher::new("mandatory_decompositions");
    pm.rule(&[Op::Threefry], |n, _| Some(threefry(n.s(0), n.s(1))));
    // ISNAN(x) → x != x (only NaN is unequal to itself); ints are never NaN.
    pm.rule(&[Op::IsNan], |n, _| {
        let x = n.s(0);
        Some(if x.dtype().is_float() {
            x.bin(Op::CmpNe, x)
        } else {
            UOp::bool_(false)
        })
    });
    pm.rule(&[Op::Cast], |n, _| saturating_cast(n));
    pm.rule(&[Op::Pow], |n, _| {
        (n.dtype().is_int()).then(|| int_pow(n.s(0), n.s(1)))
    });
    // Float IDIV is division truncated toward zero.
    pm.rule(&[Op::Idiv], |n, _| {
        n.dtype()
            .is_float()
            .then(|| n.s(0).bin(Op::Fdiv, n.s(1)).un(Op::Trunc))
    });
    // Arithmetic on bool, read as integers 0/1 converted back to bool
    // (non-zero is true): + and max are OR, * and min are AND, - is XOR
    // (1-1 = 0, 0-1 = -1 ≠ 0), and negation is the identity.
    pm.rule(
        &[Op::Add, Op::Mul, Op::Max, Op::Min, Op::Sub, Op::Neg],
        |n, _| {
            if !n.dtype().is_bool() {
                return None;
            }
            Some(match n.op() {
                Op::Add | Op::Max => n.s(0).bin(Op::Or, n.s(1)),
                Op::Mul | Op::Min => n.s(0).bin(Op::And, n.s(1)),
                Op::Sub => n.s(0).bin(Op::Xor, n.s(1)),
                _ => n.s(0).clone(),
            })
        },
    );
    pm
}
