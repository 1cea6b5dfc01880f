//! Split store (CPU): a store loop with a constant cut becomes one loop
//! per segment.
//!
//! Matches `END(STORE(..), ranges…)` whose store compares one of its
//! output ranges `r` (size `n`) with a constant, `r < c` or `c < r` (a cut
//! at `c` or `c + 1` strictly inside `0..n`): padding gates (`pad`'s
//! `1 ≤ h < 57`) and the halves of a `cat`. Produces one
//! `END(STORE[r := r_k + start_k], ranges_k…)` per segment
//! `[start_k, end_k)` between consecutive cuts, where `r_k` is a fresh
//! range of size `end_k − start_k` and every other range of the END gets a
//! fresh copy per segment (a loop has one parent, and the optimizer
//! re-sorts each END's list on its own, so segments share no loop). In
//! each segment the comparison has one value, so the symbolic rules fold
//! it: no branch (or select) per element, and the gated load of a padding
//! segment disappears.
//!
//! Why it is correct: the segments partition `0..n` and each segment's
//! store writes `r_k + start_k`, so every element is stored exactly once
//! with the value it had (the value of one element never depends on
//! another element's store in a kernel AST).
//!
//! Guards (the seed's stage 6 runs on CPUs only; every backend here is a
//! CPU). The segments are separate outermost loops, and the host threads
//! only a kernel with one outermost loop, so only kernels storing fewer
//! than [`SMALL_STORE`] elements (which run on one thread anyway) are cut;
//! a kernel is split into at most [`MAX_STORES`] stores; stores with a
//! reduction are left alone (its loop would be duplicated per segment).

use crate::kernel::replace_range;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Op, Srcs, UOp};
use std::sync::Arc;

/// The most stores split-store makes of one kernel.
pub const MAX_STORES: usize = 9;

/// Kernels storing fewer elements than this run on one thread, so their
/// outermost loop may be cut too.
pub const SMALL_STORE: i64 = 1 << 16;

/// The split-store rule.
pub fn split_store_rules() -> PatternMatcher {
    patterns! {
        @name "split-store";
        s @ Sink(..) => split_one_store(s),
    }
}

/// The cut points of range `r` in the comparisons under `store`, sorted,
/// strictly inside `0..n`.
fn cuts(store: &Arc<UOp>, r: &Arc<UOp>, n: i64) -> Vec<i64> {
    let mut cuts: Vec<i64> = store
        .toposort()
        .iter()
        .filter(|c| c.op() == Op::CmpLt)
        .filter_map(|c| {
            if Arc::ptr_eq(c.s(0), r) {
                c.s(1).const_int().and_then(|v| i64::try_from(v).ok())
            } else if Arc::ptr_eq(c.s(1), r) {
                c.s(0)
                    .const_int()
                    .and_then(|v| i64::try_from(v).ok())
                    .map(|v| v + 1)
            } else {
                None
            }
        })
        .filter(|&c| 0 < c && c < n)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// Splits the first END of `sink` that has a cut range (see the module
/// docs); `None` when none may be split.
fn split_one_store(sink: &Arc<UOp>) -> Option<Arc<UOp>> {
    let ends = sink.src();
    let elements: i64 = ends
        .iter()
        .map(|e| {
            e.src()[1..]
                .iter()
                .filter_map(|r| r.range_size())
                .product::<i64>()
        })
        .sum();
    if elements >= SMALL_STORE {
        return None;
    }
    for (k, end) in ends.iter().enumerate() {
        let has_reduce = || end.toposort().iter().any(|n| n.op() == Op::Reduce);
        if end.op() != Op::End || has_reduce() {
            continue;
        }
        let ranges = &end.src()[1..];
        for (pos, r) in ranges.iter().enumerate() {
            let Some(n) = r.range_size() else { continue };
            let cuts = cuts(end.s(0), r, n);
            if cuts.is_empty() || ends.len() + cuts.len() > MAX_STORES {
                continue;
            }
            let mut bounds = vec![0];
            bounds.extend(cuts);
            bounds.push(n);
            let mut src: Srcs = ends[..k].iter().cloned().collect();
            let mut next_axis = crate::kernel::next_axis_id(sink);
            for seg in bounds.windows(2) {
                src.push(segment(end, pos, seg[0], seg[1], &mut next_axis)?);
            }
            src.extend(ends[k + 1..].iter().cloned());
            return Some(UOp::sink(src));
        }
    }
    None
}

/// The END for segment `[start, stop)` of the range at `pos` of `end`,
/// with fresh copies of its other ranges.
fn segment(
    end: &Arc<UOp>,
    pos: usize,
    start: i64,
    stop: i64,
    next_axis: &mut usize,
) -> Option<Arc<UOp>> {
    let ranges = &end.src()[1..];
    let r = &ranges[pos];
    let fresh = |size: &Arc<UOp>, t, next_axis: &mut usize| {
        *next_axis += 1;
        UOp::range(size, *next_axis - 1, t)
    };
    let seg = fresh(&UOp::index(stop - start), r.axis_type()?, next_axis);
    let mut out = replace_range(
        end,
        r,
        &seg.add(&UOp::index(start)),
        std::slice::from_ref(&seg),
        |x| x,
    );
    for other in ranges.iter().filter(|o| !Arc::ptr_eq(o, r)) {
        let copy = fresh(other.s(0), other.axis_type()?, next_axis);
        out = replace_range(&out, other, &copy, std::slice::from_ref(&copy), |x| x);
    }
    Some(out)
}
