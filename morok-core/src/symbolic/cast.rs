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

/// True if `cast(cast(x, mid), to)` equals `cast(x, to)` for every `x` of
/// type `from`: `from → mid` loses nothing, and where the outer cast takes
/// a float to an integer type (which saturates: NaN to 0, out-of-range
/// values to the ends) while the direct cast would take an integer to an
/// integer type (which wraps), every value of `from` lies within `to`, so
/// that neither saturates nor wraps. (`i8 → f16 → u64` of `-3` is 0;
/// `i8 → u64` is `2^64 - 3`.)
pub fn chain_folds(from: ScalarType, mid: ScalarType, to: ScalarType) -> bool {
    let saturates_instead_of_wrapping = mid.is_float() && to.is_int() && !from.is_float();
    lossless(from, mid) && (!saturates_instead_of_wrapping || lossless(from, to))
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
        // cast(cast(x, mid), to) → cast(x, to) when the chain converts as
        // the direct cast does (`chain_folds`).
        n @ Cast(mid @ Cast(x)) if chain_folds(
            x.dtype().scalar_type(),
            mid.dtype().scalar_type(),
            n.dtype().scalar_type(),
        ) ~> x.cast(n.dtype()),
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
