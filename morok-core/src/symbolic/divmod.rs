//! Integer division and modulo (C semantics: truncation toward zero, the
//! remainder takes the dividend's sign).
//!
//! Index arithmetic is full of `//` and `%` by constants that bounds and
//! linear structure make redundant. The central tool is a sum (the shared
//! [`Linear`] form): a node read as `c1*x1 + c2*x2 + ... + k`. Wrapping arithmetic computes such a
//! sum modulo 2^width, so when the *exact* sum (interval arithmetic on the
//! terms' bounds) fits the dtype, the computed value is the exact value,
//! and exact rational identities about `//` and `%` apply. Every rule that
//! needs this checks it, so the rules hold for narrow types too.

use super::bounds::int_bounds;
use super::linear::{gcd, sum_forms, Linear};
use super::{fits, int_node, is_int};
use crate::dtype::DType;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::borrow::Cow;
use std::sync::Arc;

/// Splits a factor `k` by a divisor `c` into `(q, r)` with `k = c*q + r`.
type FactorSplit = fn(i128, i128) -> (i128, i128);

/// An integer node read as a linear sum `Σ coeff * term + konst` (the
/// shared [`Linear`] form, with the dtype its nodes wrap in).
struct Sum<'a> {
    dtype: DType,
    lin: Cow<'a, Linear>,
}

impl<'a> Sum<'a> {
    /// Flattens the `Add` tree under `n` (and constant factors of `Mul`),
    /// with the sum's exact interval when it fits the dtype (see
    /// [`Sum::exact`]).
    fn of(n: &'a Arc<UOp>) -> Option<(Sum<'a>, Option<(i128, i128)>)> {
        let forms = sum_forms(n)?;
        let exact = forms.written_interval.filter(|b| fits(n.dtype(), *b));
        let lin = match forms {
            Cow::Borrowed(f) => Cow::Borrowed(&f.written),
            Cow::Owned(f) => Cow::Owned(f.written),
        };
        let sum = Sum {
            dtype: n.dtype(),
            lin,
        };
        Some((sum, exact))
    }

    fn with(&self, lin: Linear) -> Sum<'static> {
        Sum {
            dtype: self.dtype,
            lin: Cow::Owned(lin),
        }
    }

    /// The exact interval of the sum, if it fits the dtype (then the wrapped
    /// value computed by the graph is the exact value).
    fn exact(&self) -> Option<(i128, i128)> {
        self.interval().filter(|b| fits(self.dtype, *b))
    }

    /// The interval of the sum over the integers (interval arithmetic on
    /// the terms' bounds), whether or not it fits the dtype.
    fn interval(&self) -> Option<(i128, i128)> {
        self.lin.interval(int_bounds)
    }

    /// Rebuilds the sum as nodes: scaled terms in order, constant last.
    fn build(&self) -> Arc<UOp> {
        self.lin.build(self.dtype)
    }

    /// Splits the sum by `c > 0` into `(Q, R)` with `self = c*Q + R`,
    /// preferring a split whose `R` lies in `[0, c)`.
    ///
    /// Factors are split by truncation (`-2 = 24*0 - 2`: small negative
    /// factors stay in `R`) or by floor division (`-2 = 24*(-1) + 22`), and
    /// the constant is then shifted by a multiple of `c` so that `R`'s lower
    /// bound lands in `[0, c)`. The first of these whose `R` is provably
    /// below `c` wins (flipped index maps need the truncating one); if none
    /// is, factors are split by truncation and the constant by floor
    /// division. Truncation keeps a small negative factor in `R` as it is:
    /// rewriting `−k` as `(c−1)·k − c·k` would make `R` and `Q` move
    /// together, and interval bounds of the result would no longer see
    /// that (a flipped view's index would seem to leave its buffer). Every
    /// split satisfies `self = c*Q + R` exactly over the integers.
    fn split(&self, c: i128) -> (Sum<'static>, Sum<'static>) {
        let (strategy, q_const, r_const) = self.split_plan(c);
        let part = |f: &dyn Fn(i128) -> i128, constant: i128| {
            self.with(Linear {
                terms: self
                    .lin
                    .terms
                    .iter()
                    .map(|(t, k)| (t.clone(), f(*k)))
                    .collect(),
                constant,
            })
        };
        (
            part(&|k| strategy(k, c).0, q_const),
            part(&|k| strategy(k, c).1, r_const),
        )
    }

    /// The choice [`Sum::split`] makes, without building anything: the
    /// factor split and the constants of `Q` and `R`.
    fn split_plan(&self, c: i128) -> (FactorSplit, i128, i128) {
        let konst = self.lin.constant;
        let strategies: [FactorSplit; 2] = [
            |k, c| (k / c, k % c),
            |k, c| (k.div_euclid(c), k.rem_euclid(c)),
        ];
        for strategy in strategies {
            let r_terms = self.lin.terms.iter().map(|(t, k)| (t, strategy(*k, c).1));
            let Some((lo, hi)) = Linear::interval_of(r_terms, 0, int_bounds) else {
                continue;
            };
            let shift = (konst + lo).div_euclid(c);
            let r_const = konst - c * shift;
            if hi + r_const < c {
                return (strategy, shift, r_const);
            }
        }
        (strategies[0], konst.div_euclid(c), konst.rem_euclid(c))
    }

    /// True if `Q` of [`Sum::split`] by `c` is zero (nothing to split off).
    fn quotient_is_zero(&self, c: i128) -> bool {
        let (strategy, q_const, _) = self.split_plan(c);
        q_const == 0 && self.lin.terms.iter().all(|(_, k)| strategy(*k, c).0 == 0)
    }
}

/// When every value of `x` has the same quotient by `c`, that quotient.
fn constant_quotient(x: &Arc<UOp>, c: ConstValue) -> Option<i128> {
    let c = c.as_i128().filter(|c| *c != 0 && is_int(x))?;
    let (lo, hi) = int_bounds(x)?;
    // Truncating division by a constant is monotone in the dividend.
    (lo / c == hi / c).then_some(lo / c)
}

/// The integer value of constant `c` if it is positive (and `n` an integer).
fn positive(n: &Arc<UOp>, c: ConstValue) -> Option<i128> {
    c.as_i128().filter(|c| *c > 0 && is_int(n))
}

/// A negative divisor other than `-1` and `MIN` (whose negation wraps).
fn negative_divisor(n: &Arc<UOp>, c: ConstValue) -> Option<i128> {
    let min = n.dtype().scalar_type().min_int();
    c.as_i128().filter(|c| is_int(n) && *c < -1 && *c != min)
}

/// `S // c` by splitting `S = c*Q + R` (R's factors in `[0, c)`): `Q + R // c`
/// when S and R are both ≥ 0 or both ≤ 0 (where truncation mirrors the same
/// identity) and both are computed exactly; `Q` when R is always in
/// `[0, c)`. For modulo the result is `R % c`, or `R`.
fn split_sum(n: &Arc<UOp>, s: &Arc<UOp>, divisor: &Arc<UOp>, c: i128) -> Option<Arc<UOp>> {
    let (sum, exact) = Sum::of(s)?;
    let sr = exact?;
    if sum.quotient_is_zero(c) {
        return None;
    }
    let (q, r) = sum.split(c);
    let rr = r.exact()?;
    let same_sign = (sr.0 >= 0 && rr.0 >= 0) || (sr.1 <= 0 && rr.1 <= 0);
    if q.lin.is_zero() || !same_sign {
        return None;
    }
    let r_is_remainder = rr.0 >= 0 && rr.1 < c;
    Some(match (n.op(), r_is_remainder) {
        (Op::Idiv, true) => q.build(),
        (Op::Idiv, false) => q.build().add(&r.build().bin(Op::Idiv, divisor)),
        (_, true) => r.build(),
        (_, false) => r.build().bin(Op::Mod, divisor),
    })
}

/// Common factors: `S // d → (S/g) // (d/g)` and `S % d → ((S/g) % (d/g)) * g`
/// with `g` the gcd of every factor, the constant and `d`, when S is
/// computed exactly (exact rational division: truncation of the same
/// quotient, and C's remainder scales with both operands).
fn cancel_gcd(n: &Arc<UOp>, s: &Arc<UOp>, d: i128) -> Option<Arc<UOp>> {
    let (sum, exact) = Sum::of(s)?;
    let g = gcd(sum.lin.content(), d);
    if g <= 1 || sum.lin.terms.is_empty() {
        return None;
    }
    exact?;
    let t = sum.with(sum.lin.divided(g)).build();
    let dt = n.dtype();
    Some(match (n.op(), g == d) {
        (Op::Idiv, true) => t,
        (Op::Idiv, false) => t.bin(Op::Idiv, &int_node(dt, d / g)),
        (_, true) => int_node(dt, 0),
        (_, false) => t.bin(Op::Mod, &int_node(dt, d / g)).mul(&int_node(dt, g)),
    })
}

/// Division and modulo rules.
pub fn divmod() -> PatternMatcher {
    patterns! {
        @name "divmod";
        // x % c → x when |x| < |c| for every value of x.
        Mod(x, @const(c)) if constant_quotient(x, c) == Some(0) ~> x,
        // x % c → x - q*c when every x has the same quotient q ≠ 0 (x is then
        // a bounded window that does not straddle a multiple of c or zero).
        n @ Mod(x, @const(c)) => {
            let q = constant_quotient(x, c).filter(|q| *q != 0)?;
            Some(x.add(&int_node(n.dtype(), -q * c.as_i128()?)))
        },
        // x // -c → -(x // c) and x % -c → x % c: truncation is symmetric,
        // and the remainder ignores the divisor's sign.
        n @ Idiv(x, @const(c)) => {
            let c = negative_divisor(n, c)?;
            Some(x.bin(Op::Idiv, &int_node(n.dtype(), -c)).un(Op::Neg))
        },
        n @ Mod(x, @const(c)) => {
            let c = negative_divisor(n, c)?;
            Some(x.bin(Op::Mod, &int_node(n.dtype(), -c)))
        },
        // (x // a) // b → x // (a*b) for a, b > 0 when a*b is representable
        // (nested truncating divisions compose, as floor divisions do).
        n @ Idiv(Idiv(x, @const(a)), @const(b)) => {
            let ab = positive(n, a)?.checked_mul(positive(n, b)?)?;
            fits(n.dtype(), (ab, ab)).then(|| x.bin(Op::Idiv, &int_node(n.dtype(), ab)))
        },
        // (x % a) % b → x % b when b divides a (a, b > 0): x % a differs
        // from x by a multiple of b and has x's sign.
        n @ Mod(Mod(x, @const(a)), k @ @const(b)) => {
            let (a, b) = (positive(n, a)?, positive(n, b)?);
            (a % b == 0).then(|| x.bin(Op::Mod, k))
        },
        // (x % (b*k)) // b → (x // b) % k for b, k > 0: true for x ≥ 0 by
        // the floor identities, and both sides are odd functions of x.
        n @ Idiv(Mod(x, @const(a)), d @ @const(b)) => {
            let (a, b) = (positive(n, a)?, positive(n, b)?);
            (a % b == 0 && a != b)
                .then(|| x.bin(Op::Idiv, d).bin(Op::Mod, &int_node(n.dtype(), a / b)))
        },
        // Div-mod recombination: (x // c) * c + x % c → x, the definition of
        // C's remainder (exact in wrapping arithmetic, whatever the signs).
        n @ Add[Mul[Idiv(x, @const(c1)), @const(c2)], Mod(x, @const(c3))]
            if is_int(n) && c1 == c2 && c2 == c3 ~> x,
        // ((x // c) % k) * c + x % c → x % (c*k) for c, k > 0 when c*k is
        // representable: the digits of x below c*k (odd in x, like both sides).
        n @ Add[Mul[Mod(Idiv(x, @const(c1)), @const(k)), @const(c2)], Mod(x, @const(c3))]
            if c1 == c2 && c2 == c3 => {
            let ck = positive(n, c1)?.checked_mul(positive(n, k)?)?;
            fits(n.dtype(), (ck, ck)).then(|| x.bin(Op::Mod, &int_node(n.dtype(), ck)))
        },
        // Sum splitting (see `split_sum`).
        for op in binary [Idiv, Mod] {
            n @ op(s, d @ @const(c)) => split_sum(n, s, d, positive(n, c).filter(|c| *c > 1)?),
        }
        // Common factors (see `cancel_gcd`).
        for op in binary [Idiv, Mod] {
            n @ op(s, @const(d)) => cancel_gcd(n, s, positive(n, d).filter(|d| *d > 1)?),
        }
    }
}
