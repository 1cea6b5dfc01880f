//! Cast folding: casts and bitcasts of constants, casts to the same type,
//! and chains whose inner conversion loses nothing.

use super::eval::{bitcast_const, cast_const};
use crate::dtype::ScalarType;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, UOp};
use std::sync::Arc;

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
        return from.max_int().max(-from.min_int()) <= exact_int_limit(to);
    }
    matches!((from, to), (F16 | BF16, F32 | F64) | (F32, F64))
}

/// The float type `t` holds every integer of magnitude up to this
/// (`2^p` with `p` significant bits) exactly.
pub fn exact_int_limit(t: ScalarType) -> i128 {
    use ScalarType::*;
    let p = match t {
        F16 => 11,
        BF16 => 8,
        F32 => 24,
        _ => 53,
    };
    1i128 << p
}

/// The constant `c` (of `x`'s type) bitcast to `n`'s type.
fn bitcast_of(n: &Arc<UOp>, x: &Arc<UOp>, c: ConstValue) -> Option<Arc<UOp>> {
    let v = bitcast_const(c, x.dtype().scalar_type(), n.dtype().scalar_type())?;
    Some(UOp::const_(n.dtype(), v))
}

/// Cast rules.
pub fn cast() -> PatternMatcher {
    patterns! {
        @name "cast";
        // cast(c) → the converted constant (not when C's conversion is undefined).
        n @ Cast(@const(c)) => Some(UOp::const_(n.dtype(), cast_const(c, n.dtype())?)),
        // A cast or bitcast to the operand's own type is the operand.
        for op in any [Cast, Bitcast] {
            n @ op(x) if x.dtype() == n.dtype() ~> x,
        }
        // cast(cast(x, mid), to) → cast(x, to) when x → mid is lossless.
        n @ Cast(mid @ Cast(x)) if lossless(x.dtype().scalar_type(), mid.dtype().scalar_type())
            ~> x.cast(n.dtype()),
        // bitcast(c) → the reinterpreted constant.
        n @ Bitcast(x @ @const(c)) => bitcast_of(n, x, c),
        // bitcast(bitcast(x)) → bitcast(x) (or x): the bits pass through.
        n @ Bitcast(Bitcast(x)) ~> {
            if x.dtype() == n.dtype() { x.clone() } else { x.bitcast(n.dtype()) }
        },
        // A bool cast to an integer is 0 or 1: cast(b) != 0 → b and
        // 0 < cast(b) → b.
        CmpNe(Cast(b), @zero) if b.dtype().is_bool() ~> b,
        CmpLt(@zero, Cast(b)) if b.dtype().is_bool() ~> b,
    }
}
