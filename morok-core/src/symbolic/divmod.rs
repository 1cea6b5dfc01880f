//! Integer division and modulo (C semantics: truncation toward zero, the
//! remainder takes the dividend's sign).
//!
//! Index arithmetic is full of `//` and `%` by constants that bounds and
//! linear structure make redundant. The central tool is [`Sum`]: a node
//! read as `c1*x1 + c2*x2 + ... + k`. Wrapping arithmetic computes such a
//! sum modulo 2^width, so when the *exact* sum (interval arithmetic on the
//! terms' bounds) fits the dtype, the computed value is the exact value,
//! and exact rational identities about `//` and `%` apply. Every rule that
//! needs this checks it, so the rules hold for narrow types too.

use super::bounds::int_bounds;
use super::{fits, int_const, int_node, is_int, same};
use crate::dtype::DType;
use crate::rewrite::PatternMatcher;
use crate::uop::{Op, UOp};
use std::sync::Arc;

/// Sums with more terms than this are left alone (keeps rules linear-time).
const MAX_TERMS: usize = 32;

/// An integer node read as a linear sum `Σ coeff * term + konst`.
pub struct Sum {
    /// The dtype of the sum.
    pub dtype: DType,
    /// Non-constant terms with their constant factors.
    pub terms: Vec<(Arc<UOp>, i128)>,
    /// The constant part.
    pub konst: i128,
}

impl Sum {
    /// Flattens the `Add` tree under `n` (and constant factors of `Mul`).
    pub fn of(n: &Arc<UOp>) -> Option<Sum> {
        if !is_int(n) {
            return None;
        }
        let mut sum = Sum {
            dtype: n.dtype(),
            terms: Vec::new(),
            konst: 0,
        };
        let mut stack = vec![n.clone()];
        while let Some(x) = stack.pop() {
            if let Some(c) = int_const(&x) {
                sum.konst += c;
            } else if x.op() == Op::Add {
                stack.extend(x.src().iter().cloned());
            } else {
                let (t, c) = match with_factor(&x) {
                    Some((t, c)) => (t.clone(), c),
                    None => (x, 1),
                };
                sum.terms.push((t, c));
                if sum.terms.len() > MAX_TERMS {
                    return None;
                }
            }
        }
        Some(sum)
    }

    /// The exact interval of the sum, if it fits the dtype (then the wrapped
    /// value computed by the graph is the exact value).
    pub fn exact(&self) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (self.konst, self.konst);
        for (t, c) in &self.terms {
            let (a, b) = int_bounds(t)?;
            let (p, q) = (a.checked_mul(*c)?, b.checked_mul(*c)?);
            lo = lo.checked_add(p.min(q))?;
            hi = hi.checked_add(p.max(q))?;
        }
        fits(self.dtype, (lo, hi)).then_some((lo, hi))
    }

    /// Rebuilds the sum as nodes: scaled terms in order, constant last.
    pub fn build(&self) -> Arc<UOp> {
        let mut acc: Option<Arc<UOp>> = None;
        for (t, c) in self.terms.iter().filter(|(_, c)| *c != 0) {
            let term = if *c == 1 {
                t.clone()
            } else {
                t.mul(&int_node(self.dtype, *c))
            };
            acc = Some(match acc {
                Some(a) => a.add(&term),
                None => term,
            });
        }
        match acc {
            None => int_node(self.dtype, self.konst),
            Some(a) if self.konst == 0 => a,
            Some(a) => a.add(&int_node(self.dtype, self.konst)),
        }
    }

    /// Splits the sum by `c > 0` into `(Q, R)` with `self = c*Q + R`: each
    /// factor and the constant are split by floor division, so `R`'s
    /// factors lie in `[0, c)`.
    fn split(&self, c: i128) -> (Sum, Sum) {
        let part = |f: fn(i128, i128) -> i128| Sum {
            dtype: self.dtype,
            terms: self.terms.iter().map(|(t, k)| (t.clone(), f(*k, c))).collect(),
            konst: f(self.konst, c),
        };
        (part(i128::div_euclid), part(i128::rem_euclid))
    }

    /// True if the sum has no terms with a non-zero factor and no constant.
    fn is_zero(&self) -> bool {
        self.konst == 0 && self.terms.iter().all(|(_, c)| *c == 0)
    }

    /// The gcd of every factor and the constant (0 for the zero sum).
    fn gcd(&self) -> i128 {
        self.terms.iter().fold(self.konst.abs(), |g, (_, c)| gcd(g, c.abs()))
    }

    /// The sum with every factor and the constant divided by `g`.
    fn divided(&self, g: i128) -> Sum {
        Sum {
            dtype: self.dtype,
            terms: self.terms.iter().map(|(t, c)| (t.clone(), c / g)).collect(),
            konst: self.konst / g,
        }
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `(x, c)` if `n` is the integer op `op` with constant right operand `c`.
fn by_const(n: &Arc<UOp>, op: Op) -> Option<(&Arc<UOp>, i128)> {
    (n.op() == op && is_int(n)).then_some(())?;
    Some((n.s(0), int_const(n.s(1))?))
}

/// When every value of `x` has the same quotient by `c`, that quotient.
fn constant_quotient(x: &Arc<UOp>, c: i128) -> Option<i128> {
    if c == 0 {
        return None;
    }
    let (lo, hi) = int_bounds(x)?;
    // Truncating division by a constant is monotone in the dividend.
    (lo / c == hi / c).then_some(lo / c)
}

/// Division and modulo rules.
pub fn divmod() -> PatternMatcher {
    let mut pm = PatternMatcher::new("divmod");

    // x % c → x when |x| < |c| for every value of x.
    pm.rule(&[Op::Mod], |n, _| {
        let (x, c) = by_const(n, Op::Mod)?;
        (constant_quotient(x, c)? == 0).then(|| x.clone())
    });
    // x % c → x - q*c when every x has the same quotient q ≠ 0 (x is then a
    // bounded window that does not straddle a multiple of c or zero).
    pm.rule(&[Op::Mod], |n, _| {
        let (x, c) = by_const(n, Op::Mod)?;
        let q = constant_quotient(x, c)?;
        (q != 0).then(|| x.add(&int_node(n.dtype(), -q * c)))
    });
    // x // -c → -(x // c) and x % -c → x % c: truncation is symmetric, and
    // the remainder ignores the divisor's sign (c ≠ MIN, whose negation wraps).
    pm.rule(&[Op::Idiv], |n, _| {
        let (x, c) = by_const(n, Op::Idiv)?;
        let min = n.dtype().scalar_type().min_int();
        (c < 0 && c != -1 && c != min).then(|| x.bin(Op::Idiv, &int_node(n.dtype(), -c)).un(Op::Neg))
    });
    pm.rule(&[Op::Mod], |n, _| {
        let (x, c) = by_const(n, Op::Mod)?;
        let min = n.dtype().scalar_type().min_int();
        (c < 0 && c != min).then(|| x.bin(Op::Mod, &int_node(n.dtype(), -c)))
    });
    // (x // a) // b → x // (a*b) for a, b > 0 when a*b is representable
    // (nested truncating divisions compose, as floor divisions do).
    pm.rule(&[Op::Idiv], |n, _| {
        let (inner, b) = by_const(n, Op::Idiv)?;
        let (x, a) = by_const(inner, Op::Idiv)?;
        let ab = a.checked_mul(b)?;
        (a > 0 && b > 0 && fits(n.dtype(), (ab, ab)))
            .then(|| x.bin(Op::Idiv, &int_node(n.dtype(), ab)))
    });
    // (x % a) % b → x % b when b divides a (a, b > 0): x % a differs from x
    // by a multiple of b and has x's sign.
    pm.rule(&[Op::Mod], |n, _| {
        let (inner, b) = by_const(n, Op::Mod)?;
        let (x, a) = by_const(inner, Op::Mod)?;
        (a > 0 && b > 0 && a % b == 0).then(|| x.bin(Op::Mod, n.s(1)))
    });
    // (x % (b*k)) // b → (x // b) % k for b, k > 0: true for x ≥ 0 by the
    // floor identities, and both sides are odd functions of x.
    pm.rule(&[Op::Idiv], |n, _| {
        let (inner, b) = by_const(n, Op::Idiv)?;
        let (x, a) = by_const(inner, Op::Mod)?;
        (a > 0 && b > 0 && a % b == 0 && a != b)
            .then(|| x.bin(Op::Idiv, n.s(1)).bin(Op::Mod, &int_node(n.dtype(), a / b)))
    });
    // Div-mod recombination: (x // c) * c + x % c → x, the definition of C's
    // remainder (exact in wrapping arithmetic, whatever the signs).
    pm.rule(&[Op::Add], |n, _| {
        super::either(n, |m, r| {
            let (x, c) = by_const(r, Op::Mod)?;
            let (q, c2) = with_factor(m)?;
            let (x2, c3) = by_const(q, Op::Idiv)?;
            (same(x, x2) && c == c2 && c == c3).then(|| x.clone())
        })
    });
    // ((x // c) % k) * c + x % c → x % (c*k) for c, k > 0 when c*k is
    // representable: the digits of x below c*k (odd in x, like both sides).
    pm.rule(&[Op::Add], |n, _| {
        super::either(n, |m, r| {
            let (x, c) = by_const(r, Op::Mod)?;
            let (qm, c2) = with_factor(m)?;
            let (q, k) = by_const(qm, Op::Mod)?;
            let (x2, c3) = by_const(q, Op::Idiv)?;
            let ck = c.checked_mul(k)?;
            (same(x, x2) && c == c2 && c == c3 && c > 0 && k > 0 && fits(n.dtype(), (ck, ck)))
                .then(|| x.bin(Op::Mod, &int_node(n.dtype(), ck)))
        })
    });
    // Sum splitting for division: with S = c*Q + R (R's factors in [0, c)),
    // S // c → Q + R // c when S and R are both ≥ 0 (or both ≤ 0, where
    // truncation mirrors the same identity), S and R computed exactly; and
    // → Q when R is always in [0, c).
    pm.rule(&[Op::Idiv], |n, _| {
        let c = int_const(n.s(1)).filter(|c| *c > 1)?;
        let s = Sum::of(n.s(0))?;
        let (q, r) = s.split(c);
        let (sr, rr) = (s.exact()?, r.exact()?);
        let same_sign = (sr.0 >= 0 && rr.0 >= 0) || (sr.1 <= 0 && rr.1 <= 0);
        if q.is_zero() || !same_sign {
            return None;
        }
        let quotient = q.build();
        Some(if rr.0 >= 0 && rr.1 < c {
            quotient
        } else {
            quotient.add(&r.build().bin(Op::Idiv, n.s(1)))
        })
    });
    // Sum splitting for modulo: S % c → R % c under the same conditions,
    // and → R when R is always in [0, c).
    pm.rule(&[Op::Mod], |n, _| {
        let c = int_const(n.s(1)).filter(|c| *c > 1)?;
        let s = Sum::of(n.s(0))?;
        let (q, r) = s.split(c);
        let (sr, rr) = (s.exact()?, r.exact()?);
        let same_sign = (sr.0 >= 0 && rr.0 >= 0) || (sr.1 <= 0 && rr.1 <= 0);
        if q.is_zero() || !same_sign {
            return None;
        }
        Some(if rr.0 >= 0 && rr.1 < c {
            r.build()
        } else {
            r.build().bin(Op::Mod, n.s(1))
        })
    });
    // Common factors: S // d → (S/g) // (d/g) with g = gcd of every factor,
    // the constant and d, when S is computed exactly (exact rational
    // division: truncation of the same quotient).
    pm.rule(&[Op::Idiv], |n, _| {
        let d = int_const(n.s(1)).filter(|d| *d > 1)?;
        let s = Sum::of(n.s(0))?;
        let g = gcd(s.gcd(), d);
        if g <= 1 || s.terms.is_empty() {
            return None;
        }
        s.exact()?;
        let t = s.divided(g).build();
        Some(if g == d { t } else { t.bin(Op::Idiv, &int_node(n.dtype(), d / g)) })
    });
    // S % d → ((S/g) % (d/g)) * g with the same g (C's remainder scales
    // with both operands).
    pm.rule(&[Op::Mod], |n, _| {
        let d = int_const(n.s(1)).filter(|d| *d > 1)?;
        let s = Sum::of(n.s(0))?;
        let g = gcd(s.gcd(), d);
        if g <= 1 || s.terms.is_empty() {
            return None;
        }
        s.exact()?;
        let t = s.divided(g).build();
        Some(if g == d {
            int_node(n.dtype(), 0)
        } else {
            t.bin(Op::Mod, &int_node(n.dtype(), d / g)).mul(&int_node(n.dtype(), g))
        })
    });

    pm
}

/// `(x, c)` if `n` is `x * c` (either order) with an integer constant `c`.
fn with_factor(n: &Arc<UOp>) -> Option<(&Arc<UOp>, i128)> {
    if n.op() != Op::Mul || !is_int(n) {
        return None;
    }
    match (int_const(n.s(0)), int_const(n.s(1))) {
        (_, Some(c)) => Some((n.s(0), c)),
        (Some(c), _) => Some((n.s(1), c)),
        _ => None,
    }
}
