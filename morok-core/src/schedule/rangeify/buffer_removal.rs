//! Buffer removal: decide, per consumer, whether a BUFFERIZE stays a buffer.
//!
//! Rules on a view index `INDEX(B, idx… [, g])` of `B = BUFFERIZE(v, a…)`:
//!
//! - *buffer folding*: `v` is a CONST → the constant. Every element of the
//!   buffer is that constant.
//! - *partial contiguous*: `B` is removable (a heuristic realization, see
//!   [`super::realize`]) and `v` contains no REDUCE any more (typically a
//!   reduction that collapsed to a closed form) → `v[a := idx]`, with the
//!   gate `g` added to every load of the inlined body. Recomputing such a
//!   body per use costs no more than reading it back from memory, and the
//!   gate keeps out-of-range coordinates from touching memory.
//! - *dead axes*: `B` is not a user output and an axis entry is `CONST 0`
//!   (size 1) or a range `v` never uses → the axis is removed from `B` and
//!   its coordinate from the index. The buffer shrinks (a broadcast that was
//!   made contiguous is stored once) and the values read are unchanged,
//!   because `v` does not vary along that axis. Every consumer rebuilds the
//!   same smaller BUFFERIZE (hash consing), so they still share one kernel.

use super::{depends_on, index_simplify as ix, is_view_index, split_view_index, view_index};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The buffer removal rule set.
pub fn buffer_rules() -> PatternMatcher {
    patterns! {
        @name "buffer-removal";
        n @ Index(..) => fold_constant_buffer(n),
        n @ Index(..) => inline_removable(n),
        n @ Index(..) => remove_dead_axes(n),
    }
}

fn fold_constant_buffer(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let body = bufferize_target(n)?.s(0);
    (body.op() == Op::Const).then(|| body.clone())
}

/// The BUFFERIZE a view index reads, if it reads one.
pub(crate) fn bufferize_target(n: &Arc<UOp>) -> Option<&Arc<UOp>> {
    if !is_view_index(n) {
        return None;
    }
    let (b, _, _) = split_view_index(n);
    (b.op() == Op::Bufferize).then_some(b)
}

fn inline_removable(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let b = bufferize_target(n)?;
    if !matches!(
        b.arg(),
        Arg::Bufferize {
            removable: true,
            ..
        }
    ) {
        return None;
    }
    let body = b.s(0);
    if body.toposort().iter().any(|x| x.op() == Op::Reduce) {
        return None;
    }
    Some(inline_read(n, b))
}

/// The body of `b` at the coordinates of the view index `n` that reads it
/// (its axes substituted, the index's gate added to every load).
pub(crate) fn inline_read(n: &Arc<UOp>, b: &Arc<UOp>) -> Arc<UOp> {
    let (_, idx, gate) = split_view_index(n);
    let map: HashMap<u64, Arc<UOp>> = b.src()[1..]
        .iter()
        .zip(idx)
        .filter(|(a, _)| a.op() == Op::Range)
        .map(|(a, i)| (a.id(), i.clone()))
        .collect();
    inline(b.s(0), &map, gate)
}

/// `body` with the ranges in `map` substituted and `gate` added to every
/// INDEX, without entering the bodies of other BUFFERIZEs it reads. A
/// hand-written walk because it must stop at BUFFERIZE nodes (which
/// `graph_rewrite` would enter); iterative, in operands-first order, so
/// deep bodies do not overflow the stack.
pub(super) fn inline(
    body: &Arc<UOp>,
    map: &HashMap<u64, Arc<UOp>>,
    gate: Option<&Arc<UOp>>,
) -> Arc<UOp> {
    let mut done: HashMap<u64, Arc<UOp>> = HashMap::new();
    let stop = |n: &UOp| n.op() == Op::Bufferize || map.contains_key(&n.id());
    for n in body.toposort_until(stop) {
        let out = if let Some(r) = map.get(&n.id()) {
            r.clone()
        } else if n.op() == Op::Bufferize {
            n.clone()
        } else {
            let src: Srcs = n.src().iter().map(|s| done[&s.id()].clone()).collect();
            let rebuilt = n.with_sources(src);
            match (rebuilt.op(), gate) {
                (Op::Index, Some(g)) => add_gate(&rebuilt, g),
                _ => rebuilt,
            }
        };
        done.insert(n.id(), out);
    }
    done[&body.id()].clone()
}

/// `INDEX(…, g0)` → `INDEX(…, g0 ∧ g)` for view and pointer indexes.
fn add_gate(index: &Arc<UOp>, g: &Arc<UOp>) -> Arc<UOp> {
    let src = index.src();
    let has_gate = src.len() > 1 && src[src.len() - 1].dtype().is_bool();
    let mut new: Srcs = src.iter().cloned().collect();
    if has_gate {
        let old = new.pop();
        new.push(ix::and(old.as_ref(), g));
    } else {
        new.push(g.clone());
    }
    index.with_sources(new)
}

fn remove_dead_axes(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let b = bufferize_target(n)?;
    if matches!(
        b.arg(),
        Arg::Bufferize {
            output: Some(_),
            ..
        }
    ) {
        return None;
    }
    let body = b.s(0);
    let live = |a: &Arc<UOp>| a.op() == Op::Range && depends_on(body, a);
    let axes = &b.src()[1..];
    if axes.iter().all(live) {
        return None;
    }
    let (_, idx, gate) = split_view_index(n);
    let mut src: Srcs = Srcs::new();
    src.push(body.clone());
    let mut kept_idx = Vec::new();
    for (a, i) in axes.iter().zip(idx) {
        if live(a) {
            src.push(a.clone());
            kept_idx.push(i.clone());
        }
    }
    Some(view_index(&b.with_sources(src), &kept_idx, gate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{AddrSpace, DType};
    use crate::uop::AxisType;

    /// A removable buffer whose body is a 100,000-node chain is inlined
    /// without recursion (a recursive walk overflows the stack here).
    #[test]
    fn inlining_a_deep_body_does_not_overflow_the_stack() {
        let r = UOp::range(&UOp::index(4), 0, AxisType::Loop);
        let mut body = r.clone();
        for _ in 0..100_000 {
            body = body.add(&UOp::index(1));
        }
        let arg = Arg::Bufferize {
            addr: AddrSpace::Global,
            output: None,
            removable: true,
        };
        let b = UOp::new(
            Op::Bufferize,
            DType::INDEX,
            Srcs::from_iter([body, r.clone()]),
            arg,
        );
        let k = UOp::range(&UOp::index(4), 1, AxisType::Loop);
        let inlined = inline_removable(&view_index(&b, std::slice::from_ref(&k), None)).unwrap();
        let nodes = inlined.toposort();
        assert!(nodes.iter().any(|n| Arc::ptr_eq(n, &k)));
        assert!(!nodes.iter().any(|n| Arc::ptr_eq(n, &r)));
        assert_eq!(nodes.iter().filter(|n| n.op() == Op::Add).count(), 100_000);
    }
}
