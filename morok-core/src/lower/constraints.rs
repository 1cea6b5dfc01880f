//! Linear constraints from gates, `lo <= Σ k·atom <= hi`, and their
//! propagation: what lowering's access bounds (`super::bounds`) know
//! beyond per-node intervals. Atoms are node ids; their intervals come
//! from the interval engine's memo.

use crate::symbolic::interval::{ceil_div, floor_div, scale, Interval};
use crate::symbolic::linear::gcd;
use std::collections::{BTreeMap, HashMap};

/// A gate constraint `lo <= sum(coeff * atom) <= hi` (no constant term).
#[derive(Clone, Debug)]
pub struct Constraint {
    /// The atoms (by node id) and their coefficients.
    pub terms: BTreeMap<u64, i128>,
    /// The least value of the sum.
    pub lo: i128,
    /// The greatest value of the sum.
    pub hi: i128,
}

impl Constraint {
    /// The factor `f` if `terms` contains `f` times this constraint's
    /// terms (each atom with `f` times its coefficient).
    pub fn multiple_in(&self, terms: &BTreeMap<u64, i128>) -> Option<i128> {
        let (a0, l0) = self.terms.iter().next()?;
        let r0 = terms.get(a0)?;
        if r0 % l0 != 0 {
            return None;
        }
        let f = r0 / l0;
        self.terms
            .iter()
            .all(|(a, l)| terms.get(a) == Some(&l.saturating_mul(f)))
            .then_some(f)
    }
}

/// A constraint `lo <= sum(k·a) <= hi` in canonical form: divided by the
/// coefficients' gcd (the atoms are integers, so the bounds round
/// inwards), so that `5x + 5y <= 17` and `x + y >= 1` merge, and with a
/// positive first coefficient, so that `x` and `-x` merge. Bounds near the
/// ends of i128 stand for "unbounded" and stay so.
pub fn normalized(
    terms: BTreeMap<u64, i128>,
    lo: i128,
    hi: i128,
) -> (Vec<(u64, i128)>, i128, i128) {
    let g = terms.values().fold(0, |g, &k| gcd(g, k.abs()));
    let (terms, lo, hi) = if g > 1 {
        let lo = if lo > i128::MIN / 2 {
            -(-lo).div_euclid(g)
        } else {
            lo
        };
        let hi = if hi < i128::MAX / 2 {
            hi.div_euclid(g)
        } else {
            hi
        };
        let terms = terms.iter().map(|(&a, &k)| (a, k / g)).collect();
        (terms, lo, hi)
    } else {
        (terms, lo, hi)
    };
    if terms.values().next().is_some_and(|v| *v < 0) {
        let terms = terms.into_iter().map(|(a, k)| (a, -k)).collect();
        (terms, hi.saturating_neg(), lo.saturating_neg())
    } else {
        (terms.into_iter().collect(), lo, hi)
    }
}

/// Adds the differences of nested constraints: when constraint `C`'s
/// terms are `f·D` (another constraint's terms) plus other terms `R`,
/// then `R = C − f·D` lies in `[C.lo − max(f·D), C.hi − min(f·D)]`. From
/// `3·(r + s) + t + u <= 5` and `0 <= t + u <= 1` this gives
/// `r + s <= 1`, which bounds an index `2·(r + s) + t + u` by 3 where the
/// nested constraints alone leave `r + s` unbounded. One round over the
/// given constraints (the derived ones are not split again); a derived
/// constraint is intersected with the interval its atoms allow.
pub fn split_nested(
    merged: &mut BTreeMap<Vec<(u64, i128)>, Interval>,
    memo: &HashMap<u64, Interval>,
) {
    let unbounded = |v: i128| !(i128::MIN / 2..=i128::MAX / 2).contains(&v);
    let given: Vec<(BTreeMap<u64, i128>, Interval)> = merged
        .iter()
        .map(|(k, &iv)| (k.iter().copied().collect(), iv))
        .collect();
    for (c, (clo, chi)) in &given {
        for (d, (dlo, dhi)) in &given {
            if d.len() >= c.len() {
                continue;
            }
            let Some((a0, l0)) = d.iter().next() else {
                continue;
            };
            let Some(f) = c.get(a0).filter(|r| *r % l0 == 0).map(|r| r / l0) else {
                continue;
            };
            if !d
                .iter()
                .all(|(a, l)| c.get(a) == Some(&l.saturating_mul(f)))
            {
                continue;
            }
            let rest: BTreeMap<u64, i128> = c
                .iter()
                .filter(|(a, _)| !d.contains_key(a))
                .map(|(&a, &k)| (a, k))
                .collect();
            let (flo, fhi) = if unbounded(*dlo) || unbounded(*dhi) {
                (i128::MIN, i128::MAX)
            } else {
                scale((*dlo, *dhi), f)
            };
            let lo = if unbounded(*clo) || unbounded(fhi) {
                i128::MIN
            } else {
                clo - fhi
            };
            let hi = if unbounded(*chi) || unbounded(flo) {
                i128::MAX
            } else {
                chi - flo
            };
            let (key, lo, hi) = normalized(rest, lo, hi);
            let natural = key.iter().try_fold((0i128, 0i128), |acc, (a, k)| {
                let iv = scale(*memo.get(a)?, *k);
                Some((acc.0.saturating_add(iv.0), acc.1.saturating_add(iv.1)))
            });
            let Some(natural) = natural else {
                continue;
            };
            let e = merged.entry(key).or_insert(natural);
            *e = (e.0.max(lo), e.1.min(hi));
        }
    }
}

/// Tightens the constraints with one another, a few rounds: when the
/// terms of a constraint `C` split into multiples `f·D` of other
/// constraints' terms plus atoms, each such `D` is bounded by what `C`
/// leaves it (`f·D ∈ C − the rest`). From `r + s >= 1`, `3 <= t <= 5` and
/// `9·(r + s) + t <= 35` this gives `r + s <= 3`. `false` if a constraint
/// is left no value (the gate is never true).
pub fn propagate(cons: &mut [Constraint], memo: &HashMap<u64, Interval>) -> bool {
    for _ in 0..4 {
        let mut changed = false;
        for ci in 0..cons.len() {
            let mut rest = cons[ci].terms.clone();
            let mut parts: Vec<(usize, i128)> = Vec::new();
            for (di, d) in cons.iter().enumerate() {
                let Some(f) = d.multiple_in(&rest).filter(|_| di != ci) else {
                    continue;
                };
                for a in d.terms.keys() {
                    rest.remove(a);
                }
                parts.push((di, f));
            }
            let mut left = (0i128, 0i128);
            for (a, k) in &rest {
                let Some(iv) = memo.get(a) else {
                    parts.clear();
                    break;
                };
                let iv = scale(*iv, *k);
                left = (left.0.saturating_add(iv.0), left.1.saturating_add(iv.1));
            }
            for j in 0..parts.len() {
                let mut others = left;
                for (k, &(dk, fk)) in parts.iter().enumerate() {
                    if k != j {
                        let iv = scale((cons[dk].lo, cons[dk].hi), fk);
                        others = (others.0.saturating_add(iv.0), others.1.saturating_add(iv.1));
                    }
                }
                let (dj, f) = parts[j];
                let (a, b) = (
                    cons[ci].lo.saturating_sub(others.1),
                    cons[ci].hi.saturating_sub(others.0),
                );
                let (lo, hi) = if f > 0 {
                    (ceil_div(a, f), floor_div(b, f))
                } else {
                    (ceil_div(b, f), floor_div(a, f))
                };
                let d = &mut cons[dj];
                let next = (d.lo.max(lo), d.hi.min(hi));
                if next != (d.lo, d.hi) {
                    (d.lo, d.hi) = next;
                    changed = true;
                }
            }
        }
        if cons.iter().any(|c| c.lo > c.hi) {
            return false;
        }
        if !changed {
            break;
        }
    }
    true
}
