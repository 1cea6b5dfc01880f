//! Reduce collapse: closed-form sums (unused ranges: [`super::reduce_unparented`]).
//!
//! An ADD reduction over a range `r ∈ [0, n)` whose body
//! is a sum of range-gated terms is replaced by a closed form, one range at
//! a time. The body is decomposed with
//!
//! - `Σ (a + b) = Σ a + Σ b`, `Σ (a − b) = Σ a − Σ b`, `Σ −a = −Σ a`;
//! - `Σ (a · y) = (Σ a) · y` when `y` does not use `r`;
//! - `Σ y = y · n` when `y` does not use `r`;
//! - `Σ where(c, y, z) = cnt·y + (n − cnt)·z` with `y, z` free of `r` (a
//!   float product with a count of 0 is 0, not `0 · inf`: see [`times`]), and
//!   `a · cast(c)` read as `where(c, a, 0)`, `cast(where(c, y, z))` as
//!   `where(c, cast y, cast z)`;
//!
//! where `c` is a conjunction of comparisons linear in `r` with coefficient
//! ±1 (`r + e < f` gives the exclusive upper bound `f − e`, `e < f − r` the
//! lower bound `e − f + 1`, equality both) and of conditions free of `r`
//! (`g`). The count of `r ∈ [0, n)` satisfying `c` is then
//! `g ? max(0, min(n, hi) − max(0, lo)) : 0`. This turns the `arange`
//! counter (a cumulative sum of ones, O(n²) as a loop) into `i + 1`.
//!
//! Load collapse. The comparisons are read by [`super::range_compare`]:
//! integer arithmetic and casts over `r` are seen through where no value
//! wraps, and a part free of `r` — a loaded length, say — is one opaque
//! term, so `Σ_k [k < len[i]]` becomes `max(0, min(n, len[i]))` with no
//! loop. Every bound is kept within `±2^62` (`small`), so the closed
//! form's `index` arithmetic cannot overflow where a loaded 64-bit value
//! would reach the type's ends.

use super::depends_on;
use super::index_simplify::{self as ix};
use super::range_compare::varying;
use super::range_compare::{as_index, float_comparison};
use crate::dtype::DType;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Arg, Op, ReduceOp, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The reduce simplification rule set.
pub fn reduce_rules() -> PatternMatcher {
    patterns! {
        @name "reduce-simplify";
        n @ Reduce(..) => reduce_collapse(n),
    }
}

fn reduce_op(n: &UOp) -> Option<ReduceOp> {
    match n.arg() {
        Arg::Reduce(op) => Some(*op),
        _ => None,
    }
}

fn range_size(r: &UOp) -> i64 {
    super::axis_size(r) as i64
}

/// Collapses one range of an ADD reduction if its body has a closed form.
fn reduce_collapse(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    if reduce_op(n)? != ReduceOp::Add || n.dtype().is_bool() {
        return None;
    }
    collapse_one_range(n, ReduceOp::Add, sum_closed)
}

/// `REDUCE(x, ranges)` with the first range `r` for which `f(x, r)` gives
/// the body reduced over `r` alone replaced by that result, still reduced
/// by `op` over the other ranges (correct because a reduction over several
/// ranges is the nested reduction over each).
pub(super) fn collapse_one_range(
    n: &Arc<UOp>,
    op: ReduceOp,
    f: impl Fn(&Arc<UOp>, &Arc<UOp>) -> Option<Arc<UOp>>,
) -> Option<Arc<UOp>> {
    let x = n.s(0);
    let ranges = &n.src()[1..];
    ranges.iter().enumerate().find_map(|(k, r)| {
        let collapsed = f(x, r)?;
        let rest: Vec<_> = ranges
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, r)| r.clone())
            .collect();
        Some(if rest.is_empty() {
            collapsed
        } else {
            collapsed.reduce(op, &rest)
        })
    })
}

/// `Σ_{r ∈ [0, n)} v` without `r`, if found (see the module docs).
///
/// The sum distributes over `+`, `−`, negation and products with a factor
/// free of `r`; the parts are closed by [`sum_part`]. Evaluated operands
/// first with an explicit stack (a deep sum does not recurse), each node
/// once.
fn sum_closed(v: &Arc<UOp>, r: &Arc<UOp>) -> Option<Arc<UOp>> {
    let varies = varying(v, r);
    let depends = |x: &Arc<UOp>| varies.contains(&x.id());
    let mut closed: HashMap<u64, Option<Arc<UOp>>> = HashMap::new();
    let mut stack = vec![(v.clone(), false)];
    while let Some((x, ready)) = stack.pop() {
        if closed.contains_key(&x.id()) {
            continue;
        }
        let parts = distributes_over(&x, &depends);
        if !ready && !parts.is_empty() {
            stack.push((x.clone(), true));
            stack.extend(parts.into_iter().map(|p| (p, false)));
            continue;
        }
        let part = |i: usize| closed.get(&x.s(i).id()).cloned().flatten();
        let out = sum_part(&x, r, &depends, part);
        closed.insert(x.id(), out);
    }
    closed.remove(&v.id()).flatten()
}

/// The operands of `x` whose sums [`sum_part`] combines (none for a part
/// closed on its own).
fn distributes_over(x: &Arc<UOp>, depends: &dyn Fn(&Arc<UOp>) -> bool) -> Vec<Arc<UOp>> {
    if !depends(x) {
        return Vec::new();
    }
    let bool_cast = |u: &Arc<UOp>| u.op() == Op::Cast && u.s(0).dtype().is_bool();
    match x.op() {
        Op::Add | Op::Sub => vec![x.s(0).clone(), x.s(1).clone()],
        Op::Neg => vec![x.s(0).clone()],
        Op::Mul if bool_cast(x.s(0)) || bool_cast(x.s(1)) => Vec::new(),
        Op::Mul if !depends(x.s(1)) => vec![x.s(0).clone()],
        Op::Mul if !depends(x.s(0)) => vec![x.s(1).clone()],
        _ => Vec::new(),
    }
}

/// `Σ_r x` from the sums of its operands (`part(i)`, for the operands
/// [`distributes_over`] lists), or directly for a term free of `r` and
/// for selections (see [`sum_where`]).
fn sum_part(
    v: &Arc<UOp>,
    r: &Arc<UOp>,
    depends: &dyn Fn(&Arc<UOp>) -> bool,
    part: impl Fn(usize) -> Option<Arc<UOp>>,
) -> Option<Arc<UOp>> {
    if !depends(v) {
        return Some(v.mul(&UOp::index(range_size(r)).cast(v.dtype())));
    }
    match v.op() {
        Op::Add | Op::Sub => Some(part(0)?.bin(v.op(), &part(1)?)),
        Op::Neg => Some(part(0)?.un(Op::Neg)),
        Op::Mul => {
            let (a, b) = (v.s(0), v.s(1));
            if b.op() == Op::Cast && b.s(0).dtype().is_bool() {
                return sum_where(b.s(0), a, &UOp::zero(v.dtype()), r);
            }
            if a.op() == Op::Cast && a.s(0).dtype().is_bool() {
                return sum_where(a.s(0), b, &UOp::zero(v.dtype()), r);
            }
            if !depends(b) {
                Some(part(0)?.mul(b))
            } else if !depends(a) {
                Some(a.mul(&part(1)?))
            } else {
                None
            }
        }
        Op::Where => sum_where(v.s(0), v.s(1), v.s(2), r),
        Op::Cast if v.s(0).dtype().is_bool() => {
            sum_where(v.s(0), &UOp::one(v.dtype()), &UOp::zero(v.dtype()), r)
        }
        Op::Cast if v.s(0).op() == Op::Where => {
            let w = v.s(0);
            sum_where(w.s(0), &w.s(1).cast(v.dtype()), &w.s(2).cast(v.dtype()), r)
        }
        _ => None,
    }
}

/// `Σ where(c, y, z)` for `y`, `z` free of `r`.
fn sum_where(c: &Arc<UOp>, y: &Arc<UOp>, z: &Arc<UOp>, r: &Arc<UOp>) -> Option<Arc<UOp>> {
    if depends_on(y, r) || depends_on(z, r) {
        return None;
    }
    let n = range_size(r);
    let cnt = count(c, r, n)?;
    let mut out = times(&cnt, y);
    if !z.is_zero_const() {
        let rest = ix::add(&UOp::index(n), &ix::mul_c(&cnt, -1));
        out = out.add(&times(&rest, z));
    }
    Some(out)
}

/// `y` summed `k` times (`k` an index count): `k · y`, except that for a
/// float `y` that may be infinite or NaN a count of 0 gives 0, as the loop
/// does (it adds no term), where `0 · inf` would be NaN (the masked lanes
/// of a padded division, say).
fn times(k: &Arc<UOp>, y: &Arc<UOp>) -> Arc<UOp> {
    let product = k.cast(y.dtype()).mul(y);
    let finite = y.const_value().is_some_and(|c| c.as_f64().is_finite());
    if !y.dtype().is_float() || finite {
        return product;
    }
    k.bin(Op::CmpNe, &UOp::index(0))
        .where_(&product, &UOp::zero(y.dtype()))
}

/// Bounds on `r` from one comparison atom: (lower inclusive, upper exclusive).
type Bound = (Option<Arc<UOp>>, Option<Arc<UOp>>);

/// The number of `r ∈ [0, n)` for which the condition `c` holds.
fn count(c: &Arc<UOp>, r: &Arc<UOp>, n: i64) -> Option<Arc<UOp>> {
    let mut atoms = Vec::new();
    conjuncts(c, &mut atoms);
    let mut lo = UOp::index(0);
    let mut hi = UOp::index(n);
    let mut guard: Option<Arc<UOp>> = None;
    for a in atoms {
        if !depends_on(&a, r) {
            guard = Some(ix::and(guard.as_ref(), &a));
            continue;
        }
        let (l, h) = atom_bound(&a, r)?;
        if !l.iter().chain(&h).all(small) {
            return None;
        }
        if let Some(l) = l {
            lo = ix::max(&lo, &l);
        }
        if let Some(h) = h {
            hi = ix::min(&hi, &h);
        }
    }
    let cnt = ix::max(&UOp::index(0), &ix::add(&hi, &ix::mul_c(&lo, -1)));
    Some(match guard {
        Some(g) => g.where_(&cnt, &UOp::index(0)),
        None => cnt,
    })
}

/// True if the `index` expression `b` (a bound on the range) lies within
/// `±2^62`, so the count `min(n, hi) − max(0, lo)` cannot overflow `i64`.
/// A bound from a loaded 64-bit value fails this and keeps its loop.
fn small(b: &Arc<UOp>) -> bool {
    let (lo, hi) = ix::bounds(b);
    lo >= -(1 << 62) && hi <= 1 << 62
}

/// The conjuncts of a boolean `AND` tree, left to right (iterative).
pub(super) fn conjuncts(c: &Arc<UOp>, out: &mut Vec<Arc<UOp>>) {
    let mut todo = vec![c.clone()];
    while let Some(c) = todo.pop() {
        if c.op() == Op::And && c.dtype().is_bool() {
            todo.push(c.s(1).clone());
            todo.push(c.s(0).clone());
        } else {
            out.push(c);
        }
    }
}

/// The `index` expression `x` as `c·r + e` with `e` free of `r`: returns
/// `(c, e)`, or `None` when `r` occurs other than as a linear term.
pub(super) fn split_off_range(x: &Arc<UOp>, r: &Arc<UOp>) -> Option<(i128, Arc<UOp>)> {
    let lin = ix::linear(x);
    let pos = lin.terms.iter().position(|(t, _)| Arc::ptr_eq(t, r))?;
    let coeff = lin.terms[pos].1;
    let mut rest = lin.clone();
    rest.terms.remove(pos);
    if rest.terms.iter().any(|(t, _)| depends_on(t, r)) {
        return None;
    }
    Some((coeff, rest.build(DType::INDEX)))
}

/// Reads `a < b`, `a <= b`, `a == b` or `not(a < b)` as a bound on `r`,
/// when `a − b` is `±r + e` with `e` free of `r`. The operands are `index`
/// expressions, or integer ones that [`as_index`] reads as such (an
/// integer `arange` compared with another).
fn atom_bound(atom: &Arc<UOp>, r: &Arc<UOp>) -> Option<Bound> {
    let operands = |c: &Arc<UOp>| Some((as_index(c.s(0), r)?, as_index(c.s(1), r)?));
    // Normalize to `d < 0` (strict), `d <= 0` is `d - 1 < 0`, `d == 0` both sides.
    let (diff, eq) = match atom.op() {
        Op::CmpLt | Op::CmpLe if atom.s(0).dtype().is_float() => {
            let (x, y) = float_comparison(atom, r)?;
            (x.bin(Op::Sub, &y), false)
        }
        Op::CmpLt => {
            let (a, b) = operands(atom)?;
            (a.bin(Op::Sub, &b), false)
        }
        Op::CmpLe => {
            let (a, b) = operands(atom)?;
            (ix::add(&a.bin(Op::Sub, &b), &UOp::index(-1)), false)
        }
        Op::CmpEq => {
            let (a, b) = operands(atom)?;
            (a.bin(Op::Sub, &b), true)
        }
        Op::Not if atom.s(0).op() == Op::CmpLt => {
            // not(a < b) ⟺ b − a − 1 < 0, i.e. b ≤ a.
            let (a, b) = operands(atom.s(0))?;
            (ix::add(&b.bin(Op::Sub, &a), &UOp::index(-1)), false)
        }
        _ => return None,
    };
    let (coeff, e) = split_off_range(&diff, r)?;
    let neg_e = ix::mul_c(&e, -1);
    match (coeff, eq) {
        // r + e < 0 ⟺ r < −e.
        (1, false) => Some((None, Some(neg_e))),
        // −r + e < 0 ⟺ r ≥ e + 1.
        (-1, false) => Some((Some(ix::add(&e, &UOp::index(1))), None)),
        // ±r + e == 0 ⟺ r = ∓e.
        (1, true) => Some((Some(neg_e.clone()), Some(ix::add(&neg_e, &UOp::index(1))))),
        (-1, true) => Some((Some(e.clone()), Some(ix::add(&e, &UOp::index(1))))),
        _ => None,
    }
}
