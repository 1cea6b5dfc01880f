//! Index algebra for the scheduler's own index expressions.
//!
//! Rangeify produces index arithmetic of a few fixed shapes: row-major
//! linearizations `Σ i_k·s_k + c`, their unravelling `(lin // s) % d`, pad
//! bounds checks `c < i`, and reduce-collapse counts built from `min`/`max`.
//! This module holds what the scheduler adds to the shared `symbolic`
//! rules for them:
//!
//! - *linear canonical form*: an ADD/SUB/MUL tree over `index` is flattened
//!   into `Σ c_t·t + c` (equal terms merged, zero terms dropped, terms kept
//!   in first-appearance order so equal graphs give equal nodes), which is
//!   exact because `index` arithmetic does not wrap;
//! - dropping a constant-true gate from an INDEX;
//! - small builders (`add`, `mul_c`, `div_c`, ...) that fold constants as
//!   they build, and [`linear`], the shared linear form of an index.
//!
//! Div/mod folding, bound-decided comparisons and `min`/`max`, and constant
//! folding come from `symbolic`, with which [`index_rules`] is combined.

use crate::dtype::DType;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::symbolic::bounds::int_bounds;
use crate::symbolic::linear::{Expand, Linear};
use crate::uop::{Op, UOp};
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

/// `a + b` over `index`, folding constants and zeros.
#[track_caller]
pub fn add(a: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    match (a.const_int(), b.const_int()) {
        (Some(x), Some(y)) => UOp::index((x + y) as i64),
        (Some(0), _) => b.clone(),
        (_, Some(0)) => a.clone(),
        _ => a.add(b),
    }
}

/// `a · c` over `index` for a constant `c`.
#[track_caller]
pub fn mul_c(a: &Arc<UOp>, c: i64) -> Arc<UOp> {
    match (a.const_int(), c) {
        (Some(x), _) => UOp::index((x * c as i128) as i64),
        (_, 0) => UOp::index(0),
        (_, 1) => a.clone(),
        _ => a.mul(&UOp::index(c)),
    }
}

/// `a // c` over `index` for a constant `c > 0`.
#[track_caller]
pub fn div_c(a: &Arc<UOp>, c: i64) -> Arc<UOp> {
    match a.const_int() {
        Some(x) => UOp::index((x / c as i128) as i64),
        None if c == 1 => a.clone(),
        None => a.bin(Op::Idiv, &UOp::index(c)),
    }
}

/// `a % c` over `index` for a constant `c > 0`.
#[track_caller]
pub fn mod_c(a: &Arc<UOp>, c: i64) -> Arc<UOp> {
    match a.const_int() {
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

/// The linear form of an `index` expression (a lone term if it is not
/// integer arithmetic): [`Linear::of`] expanding `+`, `-`, negation and
/// constant factors, which is exact because `index` arithmetic does not wrap.
pub fn linear(n: &Arc<UOp>) -> Linear {
    Linear::of(n, Expand::AddSubNegMul, usize::MAX)
        .filter(|_| is_index(n))
        .unwrap_or_else(|| Linear::atom(n))
}

/// The canonical expression of an `index` expression's linear form.
#[track_caller]
pub fn canonical(n: &Arc<UOp>) -> Arc<UOp> {
    linear(n).build(DType::INDEX)
}

/// The index rule set: linear canonical form of `index` arithmetic and
/// dropping constant-true gates. Everything decided by bounds or constants
/// (div/mod folding, comparisons, `min`/`max`) comes from the shared
/// `symbolic` rules this set is combined with.
pub fn index_rules() -> PatternMatcher {
    patterns! {
        @name "index-simplify";
        for op in binary [Add, Sub, Mul] {
            n @ op(_, _) if is_index(n) ~> canonical(n),
        }
        n @ Neg(_) if is_index(n) ~> canonical(n),
        n @ Index(..) => drop_true_gate(n),
    }
}

/// A constant-true gate (the last operand of an INDEX) guards nothing.
fn drop_true_gate(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (last, rest) = n.src().split_last()?;
    let is_true = last.dtype().is_bool() && last.const_value().is_some_and(|c| c.truthy());
    (!rest.is_empty() && is_true).then(|| n.with_sources(rest.iter().cloned().collect()))
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
