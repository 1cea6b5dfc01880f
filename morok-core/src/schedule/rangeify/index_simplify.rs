//! Index algebra for the scheduler's own index expressions.
//!
//! Rangeify produces index arithmetic of a few fixed shapes: row-major
//! linearizations `Σ i_k·s_k + c`, their unravelling `(lin // s) % d`, pad
//! bounds checks `c < i`, and reduce-collapse counts built from `min`/`max`.
//! These rules bring them to a canonical, simple form. They only touch
//! `index`-typed (and boolean) nodes, so float rounding is never affected.
//!
//! The rules, all proved by the value bounds of [`bounds`]:
//!
//! - *linear canonical form*: an ADD/SUB/MUL tree over `index` is flattened
//!   into `Σ c_t·t + c` (equal terms merged, zero terms dropped, terms kept
//!   in first-appearance order so equal graphs give equal nodes);
//! - *div/mod folding*: for `x = Σ c_t·t + c` with every term `t ≥ 0`,
//!   writing `c_t = q_t·d + r_t`: `x % d → Σ r_t·t + (c mod d)` reduced
//!   further to itself when it is provably in `[0, d)`, and
//!   `x // d → Σ q_t·t + (c div d) + (Σ r_t·t + c mod d) // d`, whose last
//!   part vanishes when provably in `[0, d)`;
//! - *bounds folding*: `min`/`max`/`<` decided by disjoint bounds;
//! - constant folding of any ALU op and identities (`x+0`, `x·1`, `x·0` for
//!   integers, `and`/`where` with constant conditions, `where(c, x, x)`).
//!
//! (These are general symbolic rules; they live here until the shared
//! `symbolic` rule set provides them.)

use crate::dtype::DType;
use crate::interp;
use crate::symbolic::bounds::int_bounds;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use std::sync::Arc;

/// Inclusive integer bounds of an `index`/integer/bool expression (the
/// shared [`int_bounds`] analysis); unknown parts give the full `i64` range.
pub fn bounds(n: &Arc<UOp>) -> (i128, i128) {
    let (lo, hi) = int_bounds(n).unwrap_or(FULL);
    (lo.max(FULL.0), hi.min(FULL.1))
}

const FULL: (i128, i128) = (i64::MIN as i128, i64::MAX as i128);

fn is_index(n: &UOp) -> bool {
    n.dtype() == DType::INDEX
}

fn int_const(n: &UOp) -> Option<i128> {
    n.const_value().and_then(|c| c.as_i128())
}

/// `a + b` over `index`, folding constants and zeros.
#[track_caller]
pub fn add(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    match (int_const(a), int_const(b)) {
        (Some(x), Some(y)) => UOp::index((x + y) as i64),
        (Some(0), _) => b.clone(),
        (_, Some(0)) => a.clone(),
        _ => a.add(b),
    }
}

/// `a · c` over `index` for a constant `c`.
#[track_caller]
pub fn mul_c(a: &Arc<UOp>, c: i64) -> Arc<UOp> {
    match (int_const(a), c) {
        (Some(x), _) => UOp::index((x * c as i128) as i64),
        (_, 0) => UOp::index(0),
        (_, 1) => a.clone(),
        _ => a.mul(&UOp::index(c)),
    }
}

/// `a // c` over `index` for a constant `c > 0`.
#[track_caller]
pub fn div_c(a: &Arc<UOp>, c: i64) -> Arc<UOp> {
    match int_const(a) {
        Some(x) => UOp::index((x / c as i128) as i64),
        None if c == 1 => a.clone(),
        None => a.bin(Op::Idiv, &UOp::index(c)),
    }
}

/// `a % c` over `index` for a constant `c > 0`.
#[track_caller]
pub fn mod_c(a: &Arc<UOp>, c: i64) -> Arc<UOp> {
    match int_const(a) {
        Some(x) => UOp::index((x % c as i128) as i64),
        None if c == 1 => UOp::index(0),
        None => a.bin(Op::Mod, &UOp::index(c)),
    }
}

/// `a < b` over `index`.
#[track_caller]
pub fn lt(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    a.bin(Op::CmpLt, b)
}

/// `a ∧ b` over bool, with `None` standing for "true".
#[track_caller]
pub fn and(a: Option<&Arc<UOp>>, b: &Arc<UOp>) -> Arc<UOp> {
    match a {
        Some(a) => a.bin(Op::And, b),
        None => b.clone(),
    }
}

/// A linear form `Σ coeff·term + constant`, terms in first-appearance order.
#[derive(Clone, Debug, Default)]
pub struct Linear {
    /// Non-constant terms and their (non-zero) coefficients.
    pub terms: Vec<(Arc<UOp>, i128)>,
    /// The constant part.
    pub constant: i128,
}

impl Linear {
    /// Decomposes an `index` expression into its linear form.
    pub fn of(n: &Arc<UOp>) -> Linear {
        let mut lin = Linear::default();
        lin.collect(n, 1);
        lin.terms.retain(|(_, c)| *c != 0);
        lin
    }

    fn collect(&mut self, n: &Arc<UOp>, scale: i128) {
        match n.op() {
            _ if int_const(n).is_some() && is_index(n) => {
                self.constant += scale * int_const(n).unwrap_or(0)
            }
            Op::Add if is_index(n) => {
                self.collect(n.s(0), scale);
                self.collect(n.s(1), scale);
            }
            Op::Sub if is_index(n) => {
                self.collect(n.s(0), scale);
                self.collect(n.s(1), -scale);
            }
            Op::Neg if is_index(n) => self.collect(n.s(0), -scale),
            Op::Mul if is_index(n) && int_const(n.s(1)).is_some() => {
                self.collect(n.s(0), scale * int_const(n.s(1)).unwrap_or(0))
            }
            Op::Mul if is_index(n) && int_const(n.s(0)).is_some() => {
                self.collect(n.s(1), scale * int_const(n.s(0)).unwrap_or(0))
            }
            _ => match self.terms.iter_mut().find(|(t, _)| Arc::ptr_eq(t, n)) {
                Some((_, c)) => *c += scale,
                None => self.terms.push((n.clone(), scale)),
            },
        }
    }

    /// Rebuilds the canonical expression `((t0·c0 + t1·c1) + …) + constant`.
    #[track_caller]
    pub fn build(&self) -> Arc<UOp> {
        let mut acc: Option<Arc<UOp>> = None;
        for (t, c) in &self.terms {
            let term = mul_c(t, *c as i64);
            acc = Some(match acc {
                Some(a) => a.add(&term),
                None => term,
            });
        }
        match acc {
            Some(a) if self.constant != 0 => a.add(&UOp::index(self.constant as i64)),
            Some(a) => a,
            None => UOp::index(self.constant as i64),
        }
    }

    /// True if every term is provably non-negative.
    pub fn terms_nonneg(&self) -> bool {
        self.terms.iter().all(|(t, _)| bounds(t).0 >= 0)
    }
}

/// Constant folding of a node whose operands are all constants.
fn fold_constants(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let foldable = matches!(
        n.op().group(),
        OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary | OpGroup::Cast
    );
    if !foldable || n.dtype().is_vector() || n.src().is_empty() {
        return None;
    }
    let args: Vec<(ConstValue, DType)> = n
        .src()
        .iter()
        .map(|s| s.const_value().map(|c| (c, s.dtype())))
        .collect::<Option<_>>()?;
    let v = interp::fold(n.op(), n.dtype(), &args)?;
    Some(UOp::const_(n.dtype(), v))
}

/// The index rule set (see the module docs).
pub fn index_rules() -> PatternMatcher {
    patterns! {
        @name "index-simplify";
        n @ _ => fold_constants(n),
        for op in binary [Add, Sub, Mul] {
            n @ op(_, _) if is_index(n) ~> Linear::of(n).build(),
        }
        n @ Neg(_) if is_index(n) ~> Linear::of(n).build(),
        Add[x, @zero] ~> x,
        Mul[x, @one] ~> x,
        n @ Mul[_, @zero] if !n.dtype().is_float() ~> UOp::zero(n.dtype()),
        n @ Mod(_, _) => fold_mod(n),
        n @ Idiv(_, _) => fold_div(n),
        n @ Max(a, b) if is_index(n) => max_by_bounds(a, b),
        n @ Min(a, b) if is_index(n) => max_by_bounds(a, b).map(|m| if Arc::ptr_eq(&m, a) { b.clone() } else { a.clone() }),
        CmpLt(a, b) if is_index(a) => decide_lt(a, b),
        And[@true, x] ~> x,
        And[_, f @ @false] ~> f,
        And(x, x) ~> x,
        Where(@true, a, _) ~> a,
        Where(@false, _, b) ~> b,
        Where(_, a, a) ~> a,
        n @ Index(..) => drop_true_gate(n),
    }
}

/// A constant-true gate (the last operand of an INDEX) guards nothing.
fn drop_true_gate(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (last, rest) = n.src().split_last()?;
    let is_true = last.dtype().is_bool() && last.const_value().is_some_and(|c| c.truthy());
    (!rest.is_empty() && is_true).then(|| n.with_sources(rest.iter().cloned().collect()))
}

/// The larger of `a` and `b` when their bounds decide it.
fn max_by_bounds(a: &Arc<UOp>, b: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (x, y) = (bounds(a), bounds(b));
    if x.0 >= y.1 {
        Some(a.clone())
    } else if y.0 >= x.1 {
        Some(b.clone())
    } else {
        None
    }
}

/// `a < b` when the bounds of `a` and `b` decide it.
fn decide_lt(a: &Arc<UOp>, b: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (x, y) = (bounds(a), bounds(b));
    if x.1 < y.0 {
        Some(UOp::bool_(true))
    } else if x.0 >= y.1 {
        Some(UOp::bool_(false))
    } else {
        None
    }
}

fn positive_divisor(n: &Arc<UOp>) -> Option<i128> {
    int_const(n.s(1)).filter(|&d| d > 0 && is_index(n))
}

/// `x % d` for `x = Σ c_t·t + c ≥ 0` with non-negative terms: coefficients
/// that are multiples of `d` drop out, the rest are reduced mod `d`; the
/// mod disappears when the remainder is provably below `d`.
fn fold_mod(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let d = positive_divisor(n)?;
    let x = n.s(0);
    let (lo, hi) = bounds(x);
    if lo >= 0 && hi < d {
        return Some(x.clone());
    }
    let lin = Linear::of(x);
    if lo < 0 || !lin.terms_nonneg() || lin.constant < 0 {
        return None;
    }
    let rem = Linear {
        terms: lin
            .terms
            .iter()
            .map(|(t, c)| (t.clone(), c.rem_euclid(d)))
            .filter(|(_, c)| *c != 0)
            .collect(),
        constant: lin.constant.rem_euclid(d),
    };
    let r = rem.build();
    if bounds(&r).1 < d {
        return Some(r);
    }
    let out = mod_c(&r, d as i64);
    (!Arc::ptr_eq(&out, n)).then_some(out)
}

/// `x // d` for `x = Σ c_t·t + c ≥ 0` with non-negative terms: the
/// quotient part `Σ (c_t div d)·t + c div d` is pulled out and the
/// remainder part dropped when provably below `d`.
fn fold_div(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let d = positive_divisor(n)?;
    let x = n.s(0);
    let (lo, hi) = bounds(x);
    if lo >= 0 && hi < d {
        return Some(UOp::index(0));
    }
    // (x // a) // b → x // (a·b) for x ≥ 0.
    if x.op() == Op::Idiv && lo >= 0 {
        if let Some(a) = positive_divisor(x) {
            return Some(div_c(x.s(0), (a * d) as i64));
        }
    }
    let lin = Linear::of(x);
    if lo < 0 || !lin.terms_nonneg() || lin.constant < 0 {
        return None;
    }
    let split = |f: fn(i128, i128) -> i128| Linear {
        terms: lin
            .terms
            .iter()
            .map(|(t, c)| (t.clone(), f(*c, d)))
            .filter(|(_, c)| *c != 0)
            .collect(),
        constant: f(lin.constant, d),
    };
    let quot = split(i128::div_euclid);
    if quot.terms.is_empty() && quot.constant == 0 {
        return None;
    }
    let rem = split(i128::rem_euclid).build();
    let q = quot.build();
    Some(if bounds(&rem).1 < d {
        q
    } else {
        add(&q, &div_c(&rem, d as i64))
    })
}

/// Builds `max(a, b)` over `index`.
#[track_caller]
pub fn max(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    a.bin(Op::Max, b)
}

/// Builds `min(a, b)` over `index`.
#[track_caller]
pub fn min(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    a.bin(Op::Min, b)
}
