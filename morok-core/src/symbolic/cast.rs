//! Cast folding: casts and bitcasts of constants, casts to the same type,
//! and chains whose inner conversion loses nothing.

use super::eval::{bitcast_const, cast_const};
use crate::dtype::ScalarType;
use crate::rewrite::PatternMatcher;
use crate::uop::{Op, UOp};

/// True if every value of `from` converts to `to` exactly (so converting
/// from `to` afterwards equals converting from `from` directly).
pub fn lossless(from: ScalarType, to: ScalarType) -> bool {
    use ScalarType::*;
    if from == to || from == Bool {
        return to != Void;
    }
    if from.is_int() && to.is_int() {
        return to.min_int() <= from.min_int() && from.max_int() <= to.max_int();
    }
    if from.is_int() && to.is_float() {
        // Integers up to 2^p in magnitude are exact with p significant bits.
        let p = match to {
            F16 => 11,
            BF16 => 8,
            F32 => 24,
            _ => 53,
        };
        return from.max_int().max(-from.min_int()) <= 1i128 << p;
    }
    matches!((from, to), (F16 | BF16, F32 | F64) | (F32, F64))
}

/// Cast rules.
pub fn cast() -> PatternMatcher {
    let mut pm = PatternMatcher::new("cast");

    // cast(c) → the converted constant (not when C's conversion is undefined).
    pm.rule(&[Op::Cast], |n, _| {
        Some(UOp::const_(n.dtype(), cast_const(n.s(0).const_value()?, n.dtype())?))
    });
    // A cast or bitcast to the operand's own type is the operand.
    pm.rule(&[Op::Cast, Op::Bitcast], |n, _| {
        (n.s(0).dtype() == n.dtype()).then(|| n.s(0).clone())
    });
    // cast(cast(x, mid), to) → cast(x, to) when x → mid is lossless.
    pm.rule(&[Op::Cast], |n, _| {
        let inner = n.s(0);
        if inner.op() != Op::Cast {
            return None;
        }
        let x = inner.s(0);
        lossless(x.dtype().scalar_type(), inner.dtype().scalar_type()).then(|| x.cast(n.dtype()))
    });
    // bitcast(c) → the reinterpreted constant.
    pm.rule(&[Op::Bitcast], |n, _| {
        let c = n.s(0).const_value()?;
        let v = bitcast_const(c, n.s(0).dtype().scalar_type(), n.dtype().scalar_type())?;
        Some(UOp::const_(n.dtype(), v))
    });
    // bitcast(bitcast(x)) → bitcast(x) (or x): the bits pass through unchanged.
    pm.rule(&[Op::Bitcast], |n, _| {
        let inner = n.s(0);
        (inner.op() == Op::Bitcast).then(|| {
            let x = inner.s(0);
            if x.dtype() == n.dtype() {
                x.clone()
            } else {
                x.bitcast(n.dtype())
            }
        })
    });

    pm
}
