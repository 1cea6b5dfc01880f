//! Index simplification under the index's own gate.
//!
//! A gated access `INDEX(buf, idx, gate)` reads or writes only where
//! `gate` holds, so `idx` only has to be right there. When the gate bounds
//! a loop counter more tightly than its loop does (`r < 5` on a loop of
//! 10, as `cat` and `pad` produce), divisions and remainders in `idx` that
//! do not fold over the whole loop may fold over the gated part: with
//! `r ≤ 4`, `(4r + 3 − k) // 20` is 0.
//!
//! The rule applies when the gate is a conjunction of comparisons of
//! counters with constants, that is exactly a box of counter ranges. It
//! replaces each narrowed counter in `idx` by a variable with the narrowed
//! bounds, simplifies, and puts the counter back. Where the gate
//! is false the new index may differ from the old one, which is harmless:
//! the access does not happen. The result is taken only when every
//! division and remainder folded away (a linear index, which the
//! buffer-access analysis bounds exactly under the gate; a partly folded
//! one can bound worse than the original), when its interval under the
//! narrowed ranges lies within the original's (a remainder bounds its
//! index by itself, while the gate condition that keeps the linear form in
//! range may not be linear), and when it has fewer nodes, so the rewrite
//! cannot cycle with the ungated rules.

use super::index_simplify::index_rules;
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher, RewriteError};
use crate::symbolic::bounds::int_bounds;
use crate::symbolic::gate::clauses;
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The gated-index rule set.
pub fn gated_index_rules() -> PatternMatcher {
    patterns! {
        @name "gated-index";
        n @ Index(..) => try simplify_under_gate(n),
    }
}

/// The ungated index simplifier used under a gate.
fn simplifier() -> &'static PatternMatcher {
    static RULES: OnceLock<PatternMatcher> = OnceLock::new();
    RULES.get_or_init(|| crate::symbolic::symbolic().combined(&index_rules(), "gated-index"))
}

/// Loop counters by id, with the `[lo, hi]` a gate confines them to.
type Narrowed = HashMap<u64, (Arc<UOp>, i128, i128)>;

/// Bounds the gate's conjuncts put on loop counters: `r < c`, `c < r`,
/// `r <= c`, `c <= r` and their negations (the shared [`clauses`] walk), intersected with the loop's own range. Counters the
/// gate does not narrow are left out. `None` unless every conjunct is such
/// a comparison: then the gate is exactly the box of the narrowed ranges,
/// and an index simplified over the box is right wherever the access
/// happens (and bounded by the box).
fn narrowed_ranges(gate: &Arc<UOp>) -> Option<Narrowed> {
    let mut out: Narrowed = HashMap::new();
    let (clauses, only_comparisons) = clauses(gate);
    if !only_comparisons {
        return None;
    }
    for clause in &clauses {
        let (r, lo, hi) = clause.range_bound()?;
        let (rlo, rhi) = int_bounds(r)?;
        let e = out.entry(r.id()).or_insert((r.clone(), rlo, rhi));
        e.1 = e.1.max(lo);
        e.2 = e.2.min(hi);
    }
    out.retain(|_, (r, lo, hi)| {
        lo <= hi && int_bounds(r).is_some_and(|(rlo, rhi)| (*lo, *hi) != (rlo, rhi))
    });
    Some(out)
}

/// True if `n` computes a division or remainder.
fn has_divmod(n: &Arc<UOp>) -> bool {
    n.toposort()
        .iter()
        .any(|u| matches!(u.op(), Op::Idiv | Op::Mod))
}

/// `INDEX(buf, idx…, gate)` with every `idx` simplified where `gate`
/// holds (see the module docs), where that makes it linear. Fails if the
/// simplification under the gate fails (does not converge).
fn simplify_under_gate(n: &Arc<UOp>) -> Result<Option<Arc<UOp>>, RewriteError> {
    let Some((gate, rest)) = n.src().split_last() else {
        return Ok(None);
    };
    if !gate.dtype().is_bool() || rest.len() < 2 {
        return Ok(None);
    }
    let Some(narrowed) = narrowed_ranges(gate).filter(|m| !m.is_empty()) else {
        return Ok(None);
    };
    let mut to_var = HashMap::new();
    let mut back = HashMap::new();
    for (id, (r, lo, hi)) in narrowed {
        // A counter bound beyond i64 cannot be a variable: decline.
        let (Ok(min), Ok(max)) = (i64::try_from(lo), i64::try_from(hi)) else {
            return Ok(None);
        };
        let var = UOp::new(
            Op::DefineVar,
            r.dtype(),
            Srcs::new(),
            Arg::Var {
                name: format!("gated range {id}"),
                min,
                max,
            },
        );
        back.insert(var.id(), r);
        to_var.insert(id, var);
    }
    let mut srcs: Srcs = Srcs::new();
    srcs.push(rest[0].clone());
    let mut smaller = false;
    for idx in &rest[1..] {
        if !has_divmod(idx) {
            srcs.push(idx.clone());
            continue;
        }
        let narrowed = idx.substitute(&to_var);
        let under_gate = graph_rewrite(simplifier(), &narrowed, &mut ())?;
        let new = under_gate.substitute(&back);
        let within = match (int_bounds(&under_gate), int_bounds(&narrowed)) {
            (Some((nlo, nhi)), Some((olo, ohi))) => olo <= nlo && nhi <= ohi,
            _ => false,
        };
        if within && !has_divmod(&new) && new.toposort().len() < idx.toposort().len() {
            smaller = true;
            srcs.push(new);
        } else {
            srcs.push(idx.clone());
        }
    }
    srcs.push(gate.clone());
    Ok(smaller.then(|| n.with_sources(srcs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;

    fn range(end: i64, axis: usize) -> Arc<UOp> {
        UOp::range(&UOp::index(end), axis, AxisType::Loop)
    }

    #[test]
    fn only_a_box_of_counter_ranges_narrows() {
        let (r, k) = (range(10, 0), range(4, 1));
        let below = r.bin(Op::CmpLt, &UOp::index(5));
        let above = UOp::index(1).bin(Op::CmpLt, &k);
        let boxed = narrowed_ranges(&below.bin(Op::And, &above)).unwrap();
        assert_eq!((boxed[&r.id()].1, boxed[&r.id()].2), (0, 4));
        assert_eq!((boxed[&k.id()].1, boxed[&k.id()].2), (2, 3));
        let not_below = below.un(Op::Not);
        let flipped = narrowed_ranges(&not_below).unwrap();
        assert_eq!((flipped[&r.id()].1, flipped[&r.id()].2), (5, 9));
        // A conjunct that is not a counter bound: the gate is not a box.
        let other = r.add(&k).bin(Op::CmpLt, &UOp::index(7));
        assert!(narrowed_ranges(&below.bin(Op::And, &other)).is_none());
    }
}
