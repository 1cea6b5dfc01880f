//! Index simplification under the index's own gate.
//!
//! A gated access `INDEX(buf, idx, gate)` reads or writes only where
//! `gate` holds, so `idx` only has to be right there. When the gate bounds
//! a loop counter more tightly than its loop does (`r < 5` on a loop of
//! 10, as `cat` and `pad` produce), divisions and remainders in `idx` that
//! do not fold over the whole loop may fold over the gated part: with
//! `r ≤ 4`, `(4r + 3 − k) // 20` is 0.
//!
//! The rule replaces each such counter in `idx` by a variable with the
//! narrowed bounds, simplifies, and puts the counter back. Where the gate
//! is false the new index may differ from the old one, which is harmless:
//! the access does not happen. The result is taken only when it has fewer
//! nodes than the original, so the rewrite cannot cycle with the
//! ungated rules.

use super::index_simplify::index_rules;
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher};
use crate::symbolic::bounds::int_bounds;
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The gated-index rule set.
pub fn gated_index_rules() -> PatternMatcher {
    patterns! {
        @name "gated-index";
        n @ Index(..) => simplify_under_gate(n),
    }
}

/// The ungated index simplifier used under a gate.
fn simplifier() -> &'static PatternMatcher {
    static RULES: OnceLock<PatternMatcher> = OnceLock::new();
    RULES.get_or_init(|| crate::symbolic::symbolic().combined(&index_rules(), "gated-index"))
}

/// Bounds the gate's conjuncts put on loop counters: `r < c`, `c < r` and
/// their negations, intersected with the loop's own range. Counters the
/// gate does not narrow are left out.
fn narrowed_ranges(gate: &Arc<UOp>) -> HashMap<u64, (Arc<UOp>, i128, i128)> {
    let mut out: HashMap<u64, (Arc<UOp>, i128, i128)> = HashMap::new();
    let mut stack = vec![(gate.clone(), false)];
    while let Some((g, negated)) = stack.pop() {
        match g.op() {
            Op::And if !negated => {
                stack.extend(g.src().iter().map(|s| (s.clone(), false)));
            }
            Op::Not => stack.push((g.s(0).clone(), !negated)),
            Op::CmpLt => {
                let (a, b) = (g.s(0), g.s(1));
                let konst = |n: &Arc<UOp>| n.const_value().and_then(|c| c.as_i128());
                // (counter, lo, hi) the comparison (or its negation) implies.
                let limit = match (a.op(), konst(a), b.op(), konst(b)) {
                    (Op::Range, _, _, Some(c)) if !negated => (a, i128::MIN, c - 1),
                    (Op::Range, _, _, Some(c)) => (a, c, i128::MAX),
                    (_, Some(c), Op::Range, _) if !negated => (b, c + 1, i128::MAX),
                    (_, Some(c), Op::Range, _) => (b, i128::MIN, c),
                    _ => continue,
                };
                let (r, lo, hi) = limit;
                let Some((rlo, rhi)) = int_bounds(r) else {
                    continue;
                };
                let e = out.entry(r.id()).or_insert((r.clone(), rlo, rhi));
                e.1 = e.1.max(lo);
                e.2 = e.2.min(hi);
            }
            _ => {}
        }
    }
    out.retain(|_, (r, lo, hi)| {
        lo <= hi && int_bounds(r).is_some_and(|(rlo, rhi)| (*lo, *hi) != (rlo, rhi))
    });
    out
}

/// `INDEX(buf, idx…, gate)` with every `idx` simplified where `gate`
/// holds (see the module docs), if that makes it smaller.
fn simplify_under_gate(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (gate, rest) = n.src().split_last()?;
    if !gate.dtype().is_bool() || rest.len() < 2 {
        return None;
    }
    let narrowed = narrowed_ranges(gate);
    if narrowed.is_empty() {
        return None;
    }
    let mut to_var = HashMap::new();
    let mut back = HashMap::new();
    for (id, (r, lo, hi)) in narrowed {
        let var = UOp::new(
            Op::DefineVar,
            r.dtype(),
            Srcs::new(),
            Arg::Var {
                name: format!("gated range {id}"),
                min: i64::try_from(lo).ok()?,
                max: i64::try_from(hi).ok()?,
            },
        );
        back.insert(var.id(), r);
        to_var.insert(id, var);
    }
    let mut srcs: Srcs = Srcs::new();
    srcs.push(rest[0].clone());
    let mut smaller = false;
    for idx in &rest[1..] {
        let under_gate = graph_rewrite(simplifier(), &idx.substitute(&to_var), &mut ()).ok()?;
        let new = under_gate.substitute(&back);
        if new.toposort().len() < idx.toposort().len() {
            smaller = true;
            srcs.push(new);
        } else {
            srcs.push(idx.clone());
        }
    }
    srcs.push(gate.clone());
    smaller.then(|| n.with_sources(srcs))
}
