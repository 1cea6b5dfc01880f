//! Linear forms of integer expressions: `Σ coeff·term + constant`.
//!
//! The one linear-sum type of the compiler. The div/mod rules read a node
//! as a sum to split it by a divisor ([`super::divmod`]), the scheduler
//! rebuilds `index` arithmetic in a canonical linear form
//! (`schedule::rangeify::index_simplify`), and the buffer-access analysis
//! (`lower::bounds`) propagates forms node by node to bound gated
//! accesses. All three use [`Linear`] and [`gcd`] from here.
//!
//! A term is any node not expanded further; equal terms (the same
//! interned node) are merged, terms with a zero coefficient dropped, and
//! terms keep their first-appearance order (left operand first), so that
//! equal graphs give equal forms and [`Linear::build`] gives equal nodes.

use super::bounds::int_bounds;
use crate::dtype::DType;
use crate::uop::{CachedTerms, ConstValue, Op, UOp};
use smallvec::{smallvec, SmallVec};
use std::borrow::Cow;
use std::sync::Arc;

/// Sums with more terms than this are left alone by the rules that read
/// nodes through [`sum_forms`] (keeps those rules linear-time).
pub const SUM_MAX_TERMS: usize = 32;

/// The sum under an integer node as the div/mod and term rules read it
/// ([`Expand::AddMul`], at most [`SUM_MAX_TERMS`] terms), with the
/// facts those rules ask for. See [`sum_forms`].
#[derive(Clone, Debug)]
pub struct SumForms {
    /// The terms as written (not merged).
    pub written: Linear,
    /// Exact interval of `written` (each term's bounds), if bounded.
    pub written_interval: Option<(i128, i128)>,
    /// `written` with equal terms merged and zero terms dropped, when that
    /// differs from `written` (see [`SumForms::merged`]).
    merged: Option<Linear>,
    /// Exact interval of the merged form, if bounded.
    pub merged_interval: Option<(i128, i128)>,
}

impl SumForms {
    fn of(n: &Arc<UOp>) -> Option<SumForms> {
        let written = Linear::of(n, Expand::AddMul, SUM_MAX_TERMS)?;
        let written_interval = written.interval(int_bounds);
        let distinct = written.terms.iter().enumerate().all(|(i, (t, k))| {
            *k != 0 && !written.terms[..i].iter().any(|(u, _)| Arc::ptr_eq(u, t))
        });
        // Distinct non-zero terms merge to the same form.
        let merged = (!distinct).then(|| written.scale(1));
        let merged_interval = match &merged {
            Some(m) => m.interval(int_bounds),
            None => written_interval,
        };
        Some(SumForms {
            written,
            written_interval,
            merged,
            merged_interval,
        })
    }

    /// The written form with equal terms merged and zero terms dropped.
    pub fn merged(&self) -> &Linear {
        self.merged.as_ref().unwrap_or(&self.written)
    }
}

impl CachedTerms for SumForms {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn into_terms(self: Box<Self>) -> Vec<Arc<UOp>> {
        let merged = self.merged.into_iter().flat_map(|m| m.terms);
        self.written
            .terms
            .into_iter()
            .chain(merged)
            .map(|(t, _)| t)
            .collect()
    }
}

/// The [`SumForms`] of `n`, computed once per node: the forms of a sum or
/// a scaled term are stored in the node's cache, and every rule that
/// reads the node shares them. A node that is its own only term (not a
/// sum) is not stored, since the cache would then keep the node alive;
/// its forms are rebuilt on each call (one term, cheap). `None` for
/// non-integer nodes and sums of more than [`SUM_MAX_TERMS`] terms.
pub fn sum_forms(n: &Arc<UOp>) -> Option<Cow<'_, SumForms>> {
    if let Some(cached) = n.cache().sum.get() {
        return cached.as_deref().and_then(stored_forms).map(Cow::Borrowed);
    }
    let forms = SumForms::of(n);
    if let Some(f) = &forms {
        if f.written.terms.iter().any(|(t, _)| Arc::ptr_eq(t, n)) {
            return forms.map(Cow::Owned);
        }
    }
    let _ = n
        .cache()
        .sum
        .set(forms.map(|f| Box::new(f) as Box<dyn CachedTerms>));
    n.cache()
        .sum
        .get()
        .expect("just set")
        .as_deref()
        .and_then(stored_forms)
        .map(Cow::Borrowed)
}

/// The [`SumForms`] behind a node's cached sum (the only fact stored there).
fn stored_forms(cached: &dyn CachedTerms) -> Option<&SumForms> {
    cached.as_any().downcast_ref::<SumForms>()
}

/// Greatest common divisor of `|a|` and `|b|` (`gcd(0, 0) = 0`).
pub fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i128::try_from(a).unwrap_or(i128::MAX)
}

/// Which operations [`Linear::of`] expands into terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expand {
    /// The `ADD` tree and one constant factor per leaf (`x·c` gives the
    /// term `x` as it stands, even if `x` is a sum), terms listed as they
    /// occur, not merged: the div/mod rules' sums, which must not look
    /// through wrapping `SUB`/`NEG` or nested products of narrow types.
    AddMul,
    /// `ADD`, `SUB`, `NEG` and `MUL` by a constant (`index` arithmetic,
    /// which never wraps).
    AddSubNegMul,
}

/// A linear form `Σ coeff·term + constant` (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Linear {
    /// Non-constant terms and their (non-zero) coefficients.
    pub terms: Vec<(Arc<UOp>, i128)>,
    /// The constant part.
    pub constant: i128,
}

impl Linear {
    /// The form `1·t`.
    pub fn atom(t: &Arc<UOp>) -> Linear {
        Linear {
            terms: vec![(t.clone(), 1)],
            constant: 0,
        }
    }

    /// The constant form `c`.
    pub fn konst(c: i128) -> Linear {
        Linear {
            terms: Vec::new(),
            constant: c,
        }
    }

    /// Reads an integer node as a linear form, expanding the operations
    /// `expand` names, iteratively (deep sums do not recurse). With
    /// [`Expand::AddSubNegMul`] equal terms are merged and zero terms
    /// dropped. Every
    /// expanded node has the root's dtype (ALU operands share it). `None`
    /// for a non-integer root, or when the form would have more than
    /// `max_terms` terms. Coefficients are exact (checked `i128`); `None`
    /// on overflow.
    pub fn of(n: &Arc<UOp>, expand: Expand, max_terms: usize) -> Option<Linear> {
        if !n.dtype().is_int() {
            return None;
        }
        let full = expand == Expand::AddSubNegMul;
        let mut lin = Linear::default();
        let mut stack: SmallVec<[(Arc<UOp>, i128); 8]> = smallvec![(n.clone(), 1i128)];
        while let Some((x, scale)) = stack.pop() {
            if let Some(c) = x.const_int() {
                lin.constant = lin.constant.checked_add(scale.checked_mul(c)?)?;
                continue;
            }
            let factor = |a: usize, k: usize| x.s(k).const_int().map(|c| (x.s(a).clone(), c));
            match x.op() {
                Op::Add => {
                    stack.push((x.s(1).clone(), scale));
                    stack.push((x.s(0).clone(), scale));
                }
                Op::Sub if full => {
                    stack.push((x.s(1).clone(), scale.checked_neg()?));
                    stack.push((x.s(0).clone(), scale));
                }
                Op::Neg if full => stack.push((x.s(0).clone(), scale.checked_neg()?)),
                Op::Mul if factor(0, 1).or_else(|| factor(1, 0)).is_some() => {
                    let (t, c) = factor(0, 1).or_else(|| factor(1, 0))?;
                    let k = scale.checked_mul(c)?;
                    if full {
                        stack.push((t, k));
                    } else {
                        lin.terms.push((t, k));
                    }
                }
                _ if !full => lin.terms.push((x, scale)),
                _ => {
                    lin.add_term(&x, scale)?;
                    if lin.terms.len() > max_terms {
                        return None;
                    }
                }
            }
        }
        if lin.terms.len() > max_terms {
            return None;
        }
        if full {
            lin.terms.retain(|(_, c)| *c != 0);
        }
        Some(lin)
    }

    /// Adds `k·t` (merged with an equal term; checked).
    fn add_term(&mut self, t: &Arc<UOp>, k: i128) -> Option<()> {
        match self.terms.iter_mut().find(|(u, _)| Arc::ptr_eq(u, t)) {
            Some((_, c)) => *c = c.checked_add(k)?,
            None => self.terms.push((t.clone(), k)),
        }
        Some(())
    }

    /// `self + k·other`, saturating (interval analyses treat the ends of
    /// `i128` as unbounded); zero terms are dropped.
    pub fn add_scaled(&self, other: &Linear, k: i128) -> Linear {
        let mut out = self.clone();
        for (t, v) in &other.terms {
            let d = v.saturating_mul(k);
            match out.terms.iter_mut().find(|(u, _)| Arc::ptr_eq(u, t)) {
                Some((_, c)) => *c = c.saturating_add(d),
                None => out.terms.push((t.clone(), d)),
            }
        }
        out.terms.retain(|(_, c)| *c != 0);
        out.constant = out
            .constant
            .saturating_add(other.constant.saturating_mul(k));
        out
    }

    /// `k·self`, saturating.
    pub fn scale(&self, k: i128) -> Linear {
        Linear::default().add_scaled(self, k)
    }

    /// The gcd of every coefficient and the constant (0 for the zero form).
    pub fn content(&self) -> i128 {
        self.terms
            .iter()
            .fold(self.constant, |g, (_, c)| gcd(g, *c))
    }

    /// The form with every coefficient and the constant divided by `g`
    /// (truncating; exact when `g` divides [`Linear::content`]).
    pub fn divided(&self, g: i128) -> Linear {
        Linear {
            terms: self.terms.iter().map(|(t, c)| (t.clone(), c / g)).collect(),
            constant: self.constant / g,
        }
    }

    /// True if the form has no non-zero coefficient and no constant.
    pub fn is_zero(&self) -> bool {
        self.constant == 0 && self.terms.iter().all(|(_, c)| *c == 0)
    }

    /// The exact interval of the form over the integers, from each term's
    /// interval (`bounds`); `None` if a term is unbounded or the
    /// arithmetic overflows `i128`.
    pub fn interval(
        &self,
        bounds: impl Fn(&Arc<UOp>) -> Option<(i128, i128)>,
    ) -> Option<(i128, i128)> {
        let terms = self.terms.iter().map(|(t, c)| (t, *c));
        Linear::interval_of(terms, self.constant, bounds)
    }

    /// [`Linear::interval`] of the form `Σ c·t + constant` given as
    /// `(t, c)` pairs, so a caller can bound a form it has not built.
    pub fn interval_of<'a>(
        terms: impl IntoIterator<Item = (&'a Arc<UOp>, i128)>,
        constant: i128,
        bounds: impl Fn(&Arc<UOp>) -> Option<(i128, i128)>,
    ) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (constant, constant);
        for (t, c) in terms {
            let (a, b) = bounds(t)?;
            let (p, q) = (a.checked_mul(c)?, b.checked_mul(c)?);
            lo = lo.checked_add(p.min(q))?;
            hi = hi.checked_add(p.max(q))?;
        }
        Some((lo, hi))
    }

    /// The rest of a form once the terms a divisor `g` is taken out of are
    /// gone: `terms + constant`, moved down by a multiple `shift·g` so its
    /// lower bound lies in `[0, g)`. Returns that form, `shift` and its
    /// interval (after the move); `None` when the interval is unknown.
    pub fn remainder_mod(
        terms: Vec<(Arc<UOp>, i128)>,
        constant: i128,
        g: i128,
        bounds: impl Fn(&Arc<UOp>) -> Option<(i128, i128)>,
    ) -> Option<(Linear, i128, (i128, i128))> {
        let mut r = Linear { terms, constant };
        let (lo, hi) = r.interval(bounds)?;
        let shift = lo.div_euclid(g);
        let moved = shift.checked_mul(g)?;
        r.constant = r.constant.checked_sub(moved)?;
        Some((r, shift, (lo - moved, hi - moved)))
    }

    /// Rebuilds the form as nodes of `dtype`: `((t0·c0 + t1·c1) + …) + c`,
    /// a coefficient of 1 omitted, the constant last and omitted when 0.
    #[track_caller]
    pub fn build(&self, dtype: DType) -> Arc<UOp> {
        let node = |v: i128| UOp::const_(dtype, ConstValue::from_i128(v, dtype.scalar_type()));
        let mut acc: Option<Arc<UOp>> = None;
        for (t, c) in self.terms.iter().filter(|(_, c)| *c != 0) {
            let term = if *c == 1 { t.clone() } else { t.mul(&node(*c)) };
            acc = Some(match acc {
                Some(a) => a.add(&term),
                None => term,
            });
        }
        match acc {
            None => node(self.constant),
            Some(a) if self.constant == 0 => a,
            Some(a) => a.add(&node(self.constant)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str) -> Arc<UOp> {
        let arg = crate::uop::Arg::Var {
            name: name.into(),
            min: 0,
            max: 10,
        };
        UOp::new(Op::DefineVar, DType::INDEX, crate::uop::Srcs::new(), arg)
    }

    #[test]
    fn gcd_of_signed_values() {
        assert_eq!(gcd(12, -18), 6);
        assert_eq!(gcd(0, -7), 7);
        assert_eq!(gcd(0, 0), 0);
    }

    #[test]
    fn index_forms_merge_terms_and_keep_their_order() {
        let (x, y) = (var("x"), var("y"));
        // (x*3 - y) + (x - 4) → 4x - y - 4
        let e = x.mul(&UOp::index(3)).sub(&y).add(&x.sub(&UOp::index(4)));
        let l = Linear::of(&e, Expand::AddSubNegMul, usize::MAX).unwrap();
        assert_eq!(l.constant, -4);
        assert_eq!(l.terms.len(), 2);
        assert!(Arc::ptr_eq(&l.terms[0].0, &x) && l.terms[0].1 == 4);
        assert!(Arc::ptr_eq(&l.terms[1].0, &y) && l.terms[1].1 == -1);
        assert_eq!(l.content(), 1);
        assert_eq!(l.interval(|_| Some((0, 10))), Some((-14, 36)));
        // Without SUB expansion the difference is a term of its own, and
        // terms are not merged.
        let s = Linear::of(&e, Expand::AddMul, usize::MAX).unwrap();
        assert_eq!(s.terms.len(), 2);
        let twice = x.add(&x);
        assert_eq!(
            Linear::of(&twice, Expand::AddMul, 8).unwrap().terms.len(),
            2
        );
        assert_eq!(
            Linear::of(&twice, Expand::AddSubNegMul, 8)
                .unwrap()
                .terms
                .len(),
            1
        );
        assert!(Linear::of(&e, Expand::AddSubNegMul, 1).is_none());
    }

    #[test]
    fn deep_sums_do_not_recurse() {
        let x = var("x");
        let mut e = x.clone();
        for _ in 0..100_000 {
            e = e.add(&UOp::index(1));
        }
        let l = Linear::of(&e, Expand::AddMul, 4).unwrap();
        assert_eq!((l.constant, l.terms.len()), (100_000, 1));
    }

    #[test]
    fn sum_forms_are_cached_and_shared() {
        let (x, y) = (var("x"), var("y"));
        let e = x.mul(&UOp::index(2)).add(&y).add(&x);
        let f = sum_forms(&e).unwrap();
        assert!(matches!(f, Cow::Borrowed(_)), "a sum's forms are cached");
        assert_eq!(f.written.terms.len(), 3);
        assert_eq!(f.merged().terms.len(), 2);
        assert_eq!(
            (f.written_interval, f.merged_interval),
            (Some((0, 40)), Some((0, 40)))
        );
        assert!(std::ptr::eq(sum_forms(&e).unwrap().as_ref(), f.as_ref()));
        // A plain variable is its own term: not stored (no self-reference).
        assert!(matches!(sum_forms(&x).unwrap(), Cow::Owned(_)));
        let distinct = x.add(&y);
        let g = sum_forms(&distinct).unwrap();
        assert!(std::ptr::eq(g.merged(), &g.written));
    }

    #[test]
    fn cached_forms_are_released_without_recursion() {
        // Each node's cached form holds the previous `%` node; dropping the
        // chain must not free those one inside another.
        let mut e = var("x");
        for _ in 0..200_000 {
            e = e.bin(Op::Mod, &UOp::index(7)).add(&UOp::index(1));
            assert!(matches!(sum_forms(&e), Some(Cow::Borrowed(_))));
        }
        drop(e);
    }

    #[test]
    fn build_round_trips() {
        let (x, y) = (var("x"), var("y"));
        let l = Linear::atom(&x)
            .add_scaled(&Linear::atom(&y), -2)
            .add_scaled(&Linear::konst(5), 1);
        let b = l.build(DType::INDEX);
        assert_eq!(Linear::of(&b, Expand::AddSubNegMul, 8), Some(l));
        assert!(Linear::konst(0).is_zero());
        assert_eq!(Linear::atom(&x).scale(6).divided(3).terms[0].1, 2);
    }
}
