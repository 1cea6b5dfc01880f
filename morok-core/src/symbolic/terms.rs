//! Rules over whole sums read as linear forms ([`Linear`], equal terms
//! merged): like terms anywhere in a sum, div/mod recombination inside
//! longer sums, and comparisons of a sum with a constant.
//!
//! Every rule fires only when the exact value of the sum (interval
//! arithmetic on the terms' bounds) fits the dtype, so the wrapped value
//! the graph computes is the exact value and integer identities apply.

use super::bounds::int_bounds;
use super::linear::{gcd, sum_forms, Linear, SumForms};
use super::{fits, int_node};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, UOp};
use std::borrow::Cow;
use std::sync::Arc;

/// The sum under `s` (its [`SumForms`], shared by every rule), when the
/// exact interval of its merged form fits the dtype.
fn exact_form(s: &Arc<UOp>) -> Option<Cow<'_, SumForms>> {
    let forms = sum_forms(s)?;
    fits(s.dtype(), forms.merged_interval?).then_some(forms)
}

/// Like terms: an `ADD` tree in which one term occurs twice (`b + a·2 +
/// a·3`) is rebuilt from its merged form (`b + a·5`).
fn merge_like_terms(s: &Arc<UOp>) -> Option<Arc<UOp>> {
    let forms = exact_form(s)?;
    (forms.merged().terms.len() < forms.written.terms.len())
        .then(|| forms.merged().build(s.dtype()))
}

/// The term `x % c` (its `x`, `c`), if `t` is one with `c > 0`.
fn mod_of(t: &Arc<UOp>) -> Option<(&Arc<UOp>, i128)> {
    (t.op() == Op::Mod)
        .then(|| Some((t.s(0), t.s(1).const_int().filter(|c| *c > 0)?)))
        .flatten()
}

/// Div/mod recombination inside a sum. With `x ≥ 0` and `a, b > 0`:
/// `k·(x % a) + k·a·(x // a) → k·x` (C's definition of the remainder,
/// for any `x`) and `k·(x % a) + k·a·((x // a) % b) → k·(x % (a·b))`
/// (the digits of `x` below `a·b`). The pair is replaced inside the
/// merged form, the other terms stay.
fn recombine(s: &Arc<UOp>) -> Option<Arc<UOp>> {
    let forms = exact_form(s)?;
    let lin = forms.merged();
    let dt = s.dtype();
    for (i, (m, k)) in lin.terms.iter().enumerate() {
        let Some((x, a)) = mod_of(m) else {
            continue;
        };
        for (j, (t, kt)) in lin.terms.iter().enumerate() {
            if i == j || Some(*kt) != k.checked_mul(a) {
                continue;
            }
            let div_x_a = |n: &Arc<UOp>| {
                n.op() == Op::Idiv && Arc::ptr_eq(n.s(0), x) && n.s(1).const_int() == Some(a)
            };
            let replacement = if div_x_a(t) {
                x.clone()
            } else if let Some((_, b)) = mod_of(t).filter(|(q, _)| div_x_a(q)) {
                let ab = a.checked_mul(b)?;
                if !fits(dt, (ab, ab)) || int_bounds(x)?.0 < 0 {
                    continue;
                }
                x.bin(Op::Mod, &int_node(dt, ab))
            } else {
                continue;
            };
            let mut rest = lin.clone();
            rest.terms = lin
                .terms
                .iter()
                .enumerate()
                .filter(|(l, _)| *l != i && *l != j)
                .map(|(_, t)| t.clone())
                .collect();
            let out = rest.add_scaled(&Linear::atom(&replacement), *k);
            return Some(out.build(dt));
        }
    }
    None
}

/// `S < c` as `T < m`: `S = g·T + R` with `g > 1` the gcd of the
/// coefficients of the terms it divides (trying each coefficient's
/// multiples), `R` the other terms plus the constant, shifted into
/// `[0, g)` (the shift moves to `c`). With `c' = g·m₀ + e`, `0 ≤ e < g`:
/// `g·T + R < c'` holds exactly when `T < m₀` if `e = 0`, and when
/// `T < m₀ + 1` if every `R < e`, `T < m₀` if every `R ≥ e` (otherwise
/// the answer depends on `R` and nothing is rewritten).
fn lt_threshold(lin: &Linear, c: i128) -> Option<(Linear, i128)> {
    let mut tried: Vec<i128> = Vec::new();
    for (_, k) in &lin.terms {
        let k = k.abs();
        if k <= 1 || tried.contains(&k) {
            continue;
        }
        tried.push(k);
        let (big, small): (Vec<_>, Vec<_>) =
            lin.terms.iter().cloned().partition(|(_, v)| v % k == 0);
        let g = big.iter().fold(0, |g, (_, v)| gcd(g, *v));
        let (_, shift, (rlo, rhi)) = Linear::remainder_mod(small, lin.constant, g, int_bounds)?;
        if rhi >= g {
            continue;
        }
        let cc = c.checked_sub(shift.checked_mul(g)?)?;
        let (m0, e) = (cc.div_euclid(g), cc.rem_euclid(g));
        let m = if e == 0 || rlo >= e {
            m0
        } else if rhi < e {
            m0 + 1
        } else {
            continue;
        };
        let t = Linear {
            terms: big,
            constant: 0,
        }
        .divided(g);
        return Some((t, m));
    }
    None
}

/// `S < c → T < m` (see [`lt_threshold`]), when `m` fits the dtype.
fn sum_lt(s: &Arc<UOp>, c: ConstValue) -> Option<Arc<UOp>> {
    let (t, m) = lt_threshold(exact_form(s)?.merged(), c.as_i128()?)?;
    let dt = s.dtype();
    fits(dt, (m, m)).then(|| t.build(dt).bin(Op::CmpLt, &int_node(dt, m)))
}

/// `c < S → m − 1 < T`: `c < S` is `!(S < c + 1)`, and `S < c + 1` is
/// `T < m` (see [`lt_threshold`]).
fn lt_sum(c: ConstValue, s: &Arc<UOp>) -> Option<Arc<UOp>> {
    let c1 = c.as_i128()?.checked_add(1)?;
    let (t, m) = lt_threshold(exact_form(s)?.merged(), c1)?;
    let dt = s.dtype();
    fits(dt, (m - 1, m - 1)).then(|| int_node(dt, m - 1).bin(Op::CmpLt, &t.build(dt)))
}

/// `S ≤ c → T < m` with `S < c + 1` as `T < m` (see [`lt_threshold`]).
fn sum_le(s: &Arc<UOp>, c: ConstValue) -> Option<Arc<UOp>> {
    let c1 = c.as_i128()?.checked_add(1)?;
    let (t, m) = lt_threshold(exact_form(s)?.merged(), c1)?;
    let dt = s.dtype();
    fits(dt, (m, m)).then(|| t.build(dt).bin(Op::CmpLt, &int_node(dt, m)))
}

/// `c ≤ S → m ≤ T` with `S < c` as `T < m` (see [`lt_threshold`]).
fn le_sum(c: ConstValue, s: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (t, m) = lt_threshold(exact_form(s)?.merged(), c.as_i128()?)?;
    let dt = s.dtype();
    fits(dt, (m, m)).then(|| int_node(dt, m).bin(Op::CmpLe, &t.build(dt)))
}

/// Rules over linear forms of sums (see the module docs).
pub fn terms() -> PatternMatcher {
    patterns! {
        @name "terms";
        // Like terms merge (see `merge_like_terms`).
        s @ Add(_, _) => merge_like_terms(s),
        // Div/mod recombination inside longer sums (see `recombine`).
        s @ Add(_, _) => recombine(s),
        // Comparisons of a sum with a constant (see `lt_threshold`).
        CmpLt(s @ Add(_, _), @const(c)) => sum_lt(s, c),
        CmpLt(s @ Mul(_, @const), @const(c)) => sum_lt(s, c),
        CmpLt(@const(c), s @ Add(_, _)) => lt_sum(c, s),
        CmpLt(@const(c), s @ Mul(_, @const)) => lt_sum(c, s),
        // S ≤ c is S < c + 1; c ≤ S is !(S < c), kept as m ≤ T.
        CmpLe(s @ Add(_, _), @const(c)) => sum_le(s, c),
        CmpLe(s @ Mul(_, @const), @const(c)) => sum_le(s, c),
        CmpLe(@const(c), s @ Add(_, _)) => le_sum(c, s),
        CmpLe(@const(c), s @ Mul(_, @const)) => le_sum(c, s),
    }
}
