//! Decompositions: ops a target cannot express become ops it can.
//!
//! The mandatory set runs for every target, because no renderer has these
//! ops as primitives: `THREEFRY`, `ISNAN`, integer `POW`, float `IDIV`
//! and arithmetic on `bool`. The transcendental set
//! ([`super::transcendental`]) runs per op the target lacks ([`Caps`]).

use super::transcendental;
use super::LowerError;
use crate::caps::Caps;
use crate::dtype::DType;
use crate::rewrite::{graph_rewrite, PatternMatcher};
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
