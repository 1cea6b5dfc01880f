//! Double-word (`hi + lo`) `f64` arithmetic for decompositions that need
//! more than 53 bits in an intermediate (`pow`'s logarithm).
//!
//! A value is an unevaluated sum `hi + lo` with `|lo| ≤ ulp(hi)/2`. The
//! error-free transformations below (Knuth's two-sum, Dekker's split and
//! product) are exact in IEEE round-to-nearest arithmetic as long as each
//! `+ − *` rounds once: the target must not contract `a·b + c` into a
//! fused multiply-add (the C backend compiles with `-ffp-contract=off`)
//! and no rewrite may reassociate float arithmetic (the symbolic rules
//! are exact for floats). Dekker's split needs `|a| < 2^996`; callers keep
//! the operands in range or discard the low word where they are not.

use crate::uop::UOp;
use std::sync::Arc;

type U = Arc<UOp>;

/// A double-word value: `hi + lo`.
pub(super) type Dw = (U, U);

fn c(v: f64) -> U {
    UOp::const_f64(crate::dtype::DType::F64, v)
}

/// `a + b` exactly as `s + e`, `s` the rounded sum (any magnitudes).
pub(super) fn two_sum(a: &U, b: &U) -> Dw {
    let s = a.add(b);
    let bb = s.sub(a);
    let e = a.sub(&s.sub(&bb)).add(&b.sub(&bb));
    (s, e)
}

/// `a + b` exactly as `s + e` when `|a| ≥ |b|` (or `a` is zero).
pub(super) fn fast_two_sum(a: &U, b: &U) -> Dw {
    let s = a.add(b);
    let e = b.sub(&s.sub(a));
    (s, e)
}

/// `a` as `hi + lo` with both halves of at most 26 significant bits, so
/// products of halves are exact.
fn split(a: &U) -> Dw {
    let t = a.mul(&c(134_217_729.0)); // 2^27 + 1
    let hi = t.sub(&t.sub(a));
    let lo = a.sub(&hi);
    (hi, lo)
}

/// `a · b` exactly as `p + e`, `p` the rounded product.
pub(super) fn two_prod(a: &U, b: &U) -> Dw {
    let p = a.mul(b);
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = ah
        .mul(&bh)
        .sub(&p)
        .add(&ah.mul(&bl))
        .add(&al.mul(&bh))
        .add(&al.mul(&bl));
    (p, e)
}

/// `x · y` of double words, to about 2^-104 relative.
pub(super) fn mul(x: &Dw, y: &Dw) -> Dw {
    let (p, e) = two_prod(&x.0, &y.0);
    let e = e.add(&x.0.mul(&y.1)).add(&x.1.mul(&y.0));
    fast_two_sum(&p, &e)
}

/// A double word from an `f64` constant pair.
pub(super) fn constant(hi: f64, lo: f64) -> Dw {
    (c(hi), c(lo))
}
