//! Comparisons read as linear in a range: the reading behind reduce
//! collapse's bounds (`super::reduce_simplify`) and the gather collapse's
//! equalities (`super::gather_collapse`), and what makes *load collapse*
//! work.
//!
//! `as_index` reads an integer expression as an `index` expression of
//! the same value whose dependence on a range `r` is visible to linear
//! forms: integer arithmetic and casts over `r` are seen through where no
//! value wraps (`(int32)(k + 1) − 1` is `k`), and a part free of `r` — a
//! loaded length, say — is one opaque term, the role a fresh variable
//! plays in tinygrad's `reduce_load_collapse`. Its arithmetic moves into
//! `index` only through an exact cast, so no rule ever computes on a
//! loaded value in its own (wrapping) type. `float_comparison` reads a
//! float comparison of an integer-valued float of `r` with a float free
//! of it as an integer one.

use super::depends_on;
use super::index_simplify::{self as ix};
use crate::dtype::DType;
use crate::symbolic::cast::exact_int_limit;
use crate::uop::{Op, UOp};
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

/// A float comparison `a < b` or `a <= b` between an integer-valued float
/// of `r` (see [`float_as_index`]) and a value `y` free of `r` as the
/// `index` comparison `x < Y` (returned as `(x, Y)`), `x` the integer.
///
/// With `y` on the left both sides are negated first (`y < x ⟺ −x < −y`).
/// For an integer `x`, `x < y ⟺ x < ⌈y⌉` and `x ≤ y ⟺ x < ⌊y⌋ + 1`. `Y` is
/// that integer clamped to `[lo, hi + 1]`, the bounds of `x` (an integer
/// at or below every `x` makes the comparison false for all of them, one
/// above makes it true), and `lo` where `y` is NaN (every comparison with
/// NaN is false). The clamp happens in floats, so only exact small
/// integers are converted, and again in `index`, for the bounds analysis.
pub(super) fn float_comparison(atom: &Arc<UOp>, r: &Arc<UOp>) -> Option<(Arc<UOp>, Arc<UOp>)> {
    let (a, b) = (atom.s(0), atom.s(1));
    let (x, y) = match (depends_on(a, r), depends_on(b, r)) {
        (true, false) => (float_as_index(a, r)?, b.clone()),
        (false, true) => (ix::mul_c(&float_as_index(b, r)?, -1), a.un(Op::Neg)),
        _ => return None,
    };
    let (lo, hi) = ix::bounds(&x);
    let dt = y.dtype();
    let c = |v: i128| UOp::const_f64(dt, v as f64);
    let int = match atom.op() {
        Op::CmpLt => y.un(Op::Ceil),
        _ => y.un(Op::Floor).add(&c(1)),
    };
    let clamped = c(lo - 1).bin(Op::CmpLt, &y).where_(
        &y.bin(Op::CmpLt, &c(hi + 1)).where_(&int, &c(hi + 1)),
        &c(lo),
    );
    let as_int = ix::max(
        &UOp::index(lo as i64),
        &ix::min(&UOp::index(hi as i64 + 1), &clamped.cast(DType::INDEX)),
    );
    Some((x, as_int))
}

/// The float `v` as an `index` expression of the same value, when `v` is
/// an integer cast to float ([`as_index`] reads the integer) under
/// additions and subtractions of integral constants, negations and
/// float-to-float casts, and every step is exact: each node's value (its
/// bounds) stays below the exact-integer limit of every type on the way, with a margin of 2 for the clamp of
/// [`float_comparison`]. Iterative over the chain.
fn float_as_index(v: &Arc<UOp>, r: &Arc<UOp>) -> Option<Arc<UOp>> {
    let mut limit = exact_int_limit(v.dtype().scalar_type()) - 2;
    let integral = |c: &Arc<UOp>, limit: i128| {
        let f = c.const_value()?.as_f64();
        (f.fract() == 0.0 && f.abs() <= limit as f64).then_some(f as i64)
    };
    // The chain from `v` down to the cast: each step's constant term and
    // the sign it applies to the rest.
    let mut steps: Vec<(i64, i64)> = Vec::new();
    let mut cur = v.clone();
    loop {
        let constant = |i: usize| integral(cur.s(i), limit);
        let (k, s, next) = match cur.op() {
            Op::Add | Op::Sub if constant(1).is_some() => {
                let c = constant(1)?;
                (
                    if cur.op() == Op::Add { c } else { -c },
                    1,
                    cur.s(0).clone(),
                )
            }
            Op::Add if constant(0).is_some() => (constant(0)?, 1, cur.s(1).clone()),
            Op::Sub if constant(0).is_some() => (constant(0)?, -1, cur.s(1).clone()),
            Op::Neg => (0, -1, cur.s(0).clone()),
            // A float-to-float conversion keeps the integers both hold.
            Op::Cast if cur.s(0).dtype().is_float() => {
                let inner = exact_int_limit(cur.s(0).dtype().scalar_type()) - 2;
                limit = limit.min(inner);
                (0, 1, cur.s(0).clone())
            }
            _ => break,
        };
        steps.push((k, s));
        cur = next;
    }
    if cur.op() != Op::Cast || !cur.dtype().is_float() {
        return None;
    }
    let within = |e: &Arc<UOp>| {
        let (lo, hi) = ix::bounds(e);
        -limit <= lo && hi <= limit
    };
    let mut e = as_index(cur.s(0), r)?;
    if !within(&e) {
        return None;
    }
    for (k, s) in steps.into_iter().rev() {
        e = ix::add(&ix::mul_c(&e, s), &UOp::index(k));
        if !within(&e) {
            return None;
        }
    }
    Some(e)
}

/// The integer expression `a` as an `index` expression of the same value,
/// read so that its dependence on the range `r` is visible to [`linear`]
/// forms (`ix::linear`):
///
/// - a part free of `r` (a loaded length, a constant, any opaque value) is
///   one term, `cast(part, index)` ([`index_value`]): this is what lets a
///   comparison with a loaded value collapse (*load collapse*);
/// - `+`, `−`, negation, products and integer casts over parts that use
///   `r` are read through, and an integer cast of an `index` expression
///   (`(int32)(k + 1) − 1`) becomes that expression;
///
/// each only when no step can wrap: the exact interval of every node read
/// through (its `index` equivalent's bounds, an over-approximation) lies
/// inside the node's type, and strictly inside `i64`, where the bounds
/// analysis saturates. Evaluated operands first with an explicit stack.
///
/// [`linear`]: ix::linear
pub(super) fn as_index(a: &Arc<UOp>, r: &Arc<UOp>) -> Option<Arc<UOp>> {
    if a.dtype() == DType::INDEX {
        return Some(a.clone());
    }
    let varies = varying(a, r);
    let mut equiv: HashMap<u64, Arc<UOp>> = HashMap::new();
    let mut stack = vec![(a.clone(), false)];
    while let Some((x, ready)) = stack.pop() {
        if equiv.contains_key(&x.id()) {
            continue;
        }
        let dt = x.dtype();
        if dt == DType::INDEX || !varies.contains(&x.id()) {
            let v = match x.op() {
                Op::Cast if x.s(0).dtype() == DType::INDEX && fits_int(x.s(0), dt) => {
                    x.s(0).clone()
                }
                _ => index_value(&x)?,
            };
            equiv.insert(x.id(), v);
            continue;
        }
        let read_through = matches!(x.op(), Op::Add | Op::Sub | Op::Neg | Op::Mul)
            || (x.op() == Op::Cast && (x.s(0).dtype().is_int() || x.s(0).dtype() == DType::INDEX));
        if !dt.is_int() || !read_through {
            return None;
        }
        if !ready {
            stack.push((x.clone(), true));
            stack.extend(x.src().iter().map(|s| (s.clone(), false)));
            continue;
        }
        let e = |i: usize| equiv[&x.s(i).id()].clone();
        let v = match x.op() {
            Op::Add => ix::add(&e(0), &e(1)),
            Op::Sub => ix::add(&e(0), &ix::mul_c(&e(1), -1)),
            Op::Neg => ix::mul_c(&e(0), -1),
            Op::Mul => e(0).mul(&e(1)),
            _ => e(0),
        };
        equiv.insert(x.id(), in_type(&v, dt)?);
    }
    equiv.remove(&a.id())
}

/// True if every value of the `index` expression `v` (its bounds) lies in
/// the integer type `dt`, and strictly inside `i64`, where the bounds
/// analysis saturates (so a 64-bit interval is never the unknown one).
fn fits_int(v: &Arc<UOp>, dt: DType) -> bool {
    let (lo, hi) = ix::bounds(v);
    let t = dt.scalar_type();
    let inside = lo >= t.min_int() && hi <= t.max_int();
    inside && lo > i64::MIN as i128 && hi < i64::MAX as i128
}

/// The value in the integer type `dt` (narrower than 64 bits, or fitting)
/// of the exact result `v` of a wrapping operation: `v` itself when it
/// fits ([`fits_int`]), `v − k·2^bits` when all of `v`'s values lie in
/// one window of the type's range shifted by `k·2^bits` (every value
/// wraps the same number of times, as `(uint8)(k + 1) + 255` does: that
/// is `k`), else `None`.
fn in_type(v: &Arc<UOp>, dt: DType) -> Option<Arc<UOp>> {
    if fits_int(v, dt) {
        return Some(v.clone());
    }
    let t = dt.scalar_type();
    let bits = t.bits();
    let (lo, hi) = ix::bounds(v);
    if bits >= 64 || lo <= i64::MIN as i128 || hi >= i64::MAX as i128 {
        return None;
    }
    let window = 1i128 << bits;
    let k = (lo - t.min_int()).div_euclid(window);
    let shift = i64::try_from(k * window).ok()?;
    (hi - k * window <= t.max_int()).then(|| ix::add(v, &UOp::index(-shift)))
}

/// `v` as an `index` value, when the conversion keeps every value: an
/// `index` expression, or an integer of at most 32 bits or a signed
/// 64-bit one.
pub(super) fn index_value(v: &Arc<UOp>) -> Option<Arc<UOp>> {
    let dt = v.dtype();
    if dt == DType::INDEX {
        return Some(v.clone());
    }
    let keeps = dt.is_int() && (dt.scalar_type().bits() <= 32 || !dt.is_unsigned());
    keeps.then(|| match v.const_int() {
        Some(c) => UOp::index(c as i64),
        None => v.cast(DType::INDEX),
    })
}

/// The ids of the nodes of `v`'s graph that depend on the range `r`.
pub(super) fn varying(v: &Arc<UOp>, r: &Arc<UOp>) -> HashSet<u64> {
    let mut varies: HashSet<u64> = HashSet::new();
    for n in v.toposort() {
        if Arc::ptr_eq(&n, r) || n.src().iter().any(|s| varies.contains(&s.id())) {
            varies.insert(n.id());
        }
    }
    varies
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::rangeify::reduce_simplify::split_off_range;
    use crate::uop::Arg;
    use crate::uop::{AxisType, Srcs};

    fn range(n: i64) -> Arc<UOp> {
        UOp::range(&UOp::index(n), 0, AxisType::Reduce)
    }

    /// An opaque value of `dtype` (a loaded one, say) in `[min, max]`.
    fn var(dtype: DType, min: i64, max: i64) -> Arc<UOp> {
        let arg = Arg::Var {
            name: "len".into(),
            min,
            max,
        };
        UOp::new(Op::DefineVar, dtype, Srcs::new(), arg)
    }

    /// `Some(c)` if `x` reads as `c·r + (terms free of r)`.
    fn coefficient(x: &Arc<UOp>, r: &Arc<UOp>) -> Option<i128> {
        split_off_range(&as_index(x, r)?, r).map(|(c, _)| c)
    }

    #[test]
    fn integer_casts_of_a_bounded_index_read_as_linear() {
        let r = range(64);
        let k1 = ix::add(&r, &UOp::index(1));
        let i32_count = k1.cast(DType::I32);
        let minus_one = i32_count.bin(Op::Sub, &UOp::one(DType::I32));
        assert_eq!(coefficient(&minus_one, &r), Some(1));
        assert_eq!(
            coefficient(&minus_one.un(Op::Neg).cast(DType::I16), &r),
            Some(-1)
        );
        // uint8: k + 1 + 255 wraps once for every k, to k.
        let u8_count = k1.cast(DType::U8).add(&UOp::const_f64(DType::U8, 255.0));
        let lin = ix::linear(&as_index(&u8_count, &r).unwrap());
        assert_eq!((lin.constant, lin.terms.len()), (0, 1));
        // int8 over 0..200 wraps for some k only: not linear.
        let r200 = range(200);
        assert!(as_index(&r200.cast(DType::I8), &r200).is_none());
        // A loaded (opaque) value is one term; a u64 one has no exact index.
        let len = var(DType::I32, i32::MIN.into(), i32::MAX.into());
        let len_index = as_index(&len, &r).unwrap();
        assert!(len_index.dtype() == DType::INDEX && !depends_on(&len_index, &r));
        assert!(as_index(&var(DType::U64, 0, 10), &r).is_none());
        // Adding it to the count (or subtracting it) may wrap in int32,
        // unless the value's bounds rule that out.
        assert!(as_index(&i32_count.add(&len), &r).is_none());
        assert!(as_index(&minus_one.sub(&len), &r).is_none());
        let short = var(DType::I32, -5, 100);
        assert_eq!(coefficient(&i32_count.add(&short), &r), Some(1));
    }

    #[test]
    fn integer_valued_floats_read_as_linear_within_their_exact_range() {
        let r = range(64);
        let f = ix::add(&r, &UOp::index(1)).cast(DType::F32);
        let minus_one = f.sub(&UOp::const_f64(DType::F32, 1.0));
        let e = float_as_index(&minus_one, &r).unwrap();
        assert_eq!(split_off_range(&e, &r).map(|(c, _)| c), Some(1));
        let half = f.sub(&UOp::const_f64(DType::F32, 0.5));
        assert!(float_as_index(&half, &r).is_none());
        // f16 holds integers up to 2048 exactly.
        let long = range(4000);
        assert!(float_as_index(&long.cast(DType::F16), &long).is_none());
        assert!(float_as_index(&long.cast(DType::F32), &long).is_some());
    }
}
