//! Division and modulo by congruence: folds of `S // c` and `S % c` that
//! need more than splitting the sum by the divisor ([`super::divmod`]).
//!
//! All rules read the dividend as a linear form `S = Σ kᵢ·tᵢ + k₀` (the
//! shared [`Linear`], equal terms merged) and fire only when the *exact*
//! value of `S` (interval arithmetic on the terms' bounds) fits the dtype,
//! so the wrapped value the graph computes is the exact value, and only
//! when `S ≥ 0`, where C's truncating `//` and `%` are floor division and
//! its non-negative remainder.

use super::bounds::int_bounds;
use super::linear::{gcd, sum_forms, Linear, SumForms};
use super::{fits, int_node, is_int};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::sync::Arc;

/// Factor splits look for divisors of constants up to this size (index
/// divisors are small; trial division stays cheap).
const MAX_DIVISOR: i128 = 1 << 24;

/// Single-variable dividends are enumerated over at most this many values.
const MAX_ENUMERATION: i128 = 256;

/// The dividend as a merged linear form, with its exact interval, when
/// that interval is non-negative and fits `dtype`.
fn nonneg_form(s: &Arc<UOp>) -> Option<Cow<'_, SumForms>> {
    let forms = sum_forms(s)?;
    let iv = forms.merged_interval?;
    (iv.0 >= 0 && fits(s.dtype(), iv)).then_some(forms)
}

/// The positive integer value of divisor `c` (of an integer node `n`).
fn divisor(n: &Arc<UOp>, c: ConstValue) -> Option<i128> {
    c.as_i128().filter(|c| *c > 1 && is_int(n))
}

/// Affine quotient: `S = k·v + b` in one variable `v ∈ [lo, hi]` (a small
/// range) whose quotient `S // c` is affine in `v`, `q(v) = q₀ + s·(v−lo)`
/// (checked on every value), becomes `s·v + (q₀ − s·lo)`, and `S % c`
/// becomes `S − c·q(v)` = `(k − c·s)·v + (b − c·(q₀ − s·lo))`. Both are
/// exact on the whole range, since every value was checked.
/// Example: `(3a + 3) // 4 → a` and `(3a + 3) % 4 → 3 − a` for `a ∈ [0, 3]`.
fn affine_quotient(n: &Arc<UOp>, s: &Arc<UOp>, c: i128) -> Option<Arc<UOp>> {
    let forms = nonneg_form(s)?;
    let lin = forms.merged();
    let [(v, k)] = lin.terms.as_slice() else {
        return None;
    };
    let (lo, hi) = int_bounds(v)?;
    if hi - lo > MAX_ENUMERATION || hi == lo {
        return None;
    }
    let b = lin.constant;
    let q = |x: i128| (k * x + b).div_euclid(c);
    let (q0, slope) = (q(lo), q(lo + 1) - q(lo));
    if (lo..=hi).any(|x| q(x) != q0 + slope * (x - lo)) {
        return None;
    }
    let quotient = Linear {
        terms: vec![(v.clone(), slope)],
        constant: q0 - slope * lo,
    };
    let out = match n.op() {
        Op::Idiv => quotient,
        _ => lin.add_scaled(&quotient, -c),
    };
    let dt = n.dtype();
    if !fits(dt, out.interval(int_bounds)?) {
        return None;
    }
    Some(match out.terms.as_slice() {
        // `b − v` rather than `v·(−1) + b`.
        [(v, -1)] => int_node(dt, out.constant).sub(v),
        _ => out.build(dt),
    })
}

/// The divisors of `c > 1` greater than 1, largest first (trial division
/// up to `√c`).
fn divisors_desc(c: i128) -> Vec<i128> {
    let mut out = Vec::new();
    // Callers bound `c` by `MAX_DIVISOR`, so 64-bit division is exact.
    let Ok(c64) = u64::try_from(c) else {
        return out;
    };
    let mut i: u64 = 1;
    while i * i <= c64 {
        if c64 % i == 0 {
            out.push(i128::from(i));
            out.push(i128::from(c64 / i));
        }
        i += 1;
    }
    out.retain(|g| *g > 1);
    out.sort_unstable_by(|a, b| b.cmp(a));
    out.dedup();
    out
}

/// Factor split: `S = g·T + R` where `g > 1` divides `c`, `T` gathers the
/// terms whose coefficients `g` divides (plus a multiple of `g` taken from
/// the constant) and `R`, the other terms and the rest of the constant,
/// lies in `[0, g)`. Then, for `S ≥ 0` and `T ≥ 0`,
/// `S // c = T // (c/g)` and `S % c = (T % (c/g))·g + R`: adding
/// `R ∈ [0, g)` to a multiple of `g` cannot cross a multiple of `c`.
/// The largest such `g` wins. Examples: `(4g + 2l + 1) // 10 →
/// (2g + l) // 5` (the remainder 1 drops); `(4a + b + 2) % 8 →
/// (a % 2)·4 + b + 2` for `b ∈ [0, 1]`.
fn factor_split(n: &Arc<UOp>, s: &Arc<UOp>, c: i128) -> Option<Arc<UOp>> {
    if c > MAX_DIVISOR {
        return None;
    }
    let forms = nonneg_form(s)?;
    let lin = forms.merged();
    let dt = n.dtype();
    // A divisor `g` of `c` takes a term out exactly when it divides
    // `gcd(k, c)`; when no term shares a factor with `c` there is nothing
    // to split (checked before any form is built).
    let shared: SmallVec<[i128; 8]> = lin
        .terms
        .iter()
        .map(|(_, k)| gcd(*k, c))
        .filter(|g| *g > 1)
        .collect();
    if shared.is_empty() {
        return None;
    }
    for g in divisors_desc(c) {
        if !shared.iter().any(|s| s % g == 0) {
            continue;
        }
        let (big, small): (Vec<_>, Vec<_>) =
            lin.terms.iter().cloned().partition(|(_, k)| k % g == 0);
        let (r, shift, (_, rhi)) = Linear::remainder_mod(small, lin.constant, g, int_bounds)?;
        if rhi >= g {
            continue;
        }
        let t = Linear {
            terms: big,
            constant: shift * g,
        }
        .divided(g);
        // `T ≥ 0` follows from `S ≥ 0` and `R < g`; its bounds must show
        // it too (the rewrite renders a truncating division of `T`).
        if t.interval(int_bounds)?.0 < 0 {
            continue;
        }
        let (tn, cg) = (t.build(dt), int_node(dt, c / g));
        let out = match (n.op(), c == g) {
            (Op::Idiv, true) => tn,
            (Op::Idiv, false) => tn.bin(Op::Idiv, &cg),
            (_, true) => r.build(dt),
            (_, false) => {
                let m = tn.bin(Op::Mod, &cg).mul(&int_node(dt, g));
                if r.is_zero() {
                    m
                } else {
                    m.add(&r.build(dt))
                }
            }
        };
        return Some(out);
    }
    None
}

/// `(d·a + b) // d → a + b // d` and `(d·a + b) % d → b % d` for a
/// symbolic divisor `d ≥ 1`, with `d·a ≥ 0` and `b ≥ 0` (floor division
/// of non-negative values, where `d·a` is a multiple of `d`), when `d·a +
/// b` is computed exactly.
fn symbolic_divisor(n: &Arc<UOp>, da: &Arc<UOp>, a: &Arc<UOp>, b: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (slo, shi) = (int_bounds(da)?, int_bounds(b)?);
    let total = (slo.0.checked_add(shi.0)?, slo.1.checked_add(shi.1)?);
    if !is_int(n) || slo.0 < 0 || shi.0 < 0 || !fits(n.dtype(), total) {
        return None;
    }
    let d = n.s(1);
    Some(match n.op() {
        Op::Idiv => a.add(&b.bin(Op::Idiv, d)),
        _ => b.bin(Op::Mod, d),
    })
}

/// Whether `d` is at least 1 (a usable symbolic divisor).
fn at_least_one(d: &Arc<UOp>) -> bool {
    is_int(d) && int_bounds(d).is_some_and(|(lo, _)| lo >= 1)
}

/// Congruence rules for `//` and `%` (see the module docs).
pub fn congruence() -> PatternMatcher {
    patterns! {
        @name "congruence";
        // Affine quotient (see `affine_quotient`).
        for op in binary [Idiv, Mod] {
            n @ op(s, @const(c)) => affine_quotient(n, s, divisor(n, c)?),
        }
        // Factor split (see `factor_split`).
        for op in binary [Idiv, Mod] {
            n @ op(s, @const(c)) => factor_split(n, s, divisor(n, c)?),
        }
        // A symbolic divisor divides its own multiple (see `symbolic_divisor`).
        for op in binary [Idiv, Mod] {
            n @ op(Add[da @ Mul[d, a], b], d) if at_least_one(d) => symbolic_divisor(n, da, a, b),
        }
        // A loop counter is below its own end: r // end → 0, r % end → r.
        n @ Idiv(Range(e), e) if is_int(n) ~> int_node(n.dtype(), 0),
        Mod(r @ Range(e), e) ~> r,
    }
}
