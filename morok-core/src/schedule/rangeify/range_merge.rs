//! Cost-checked range merging: two adjacent loops become one when the
//! merged index costs no more divisions and remainders.
//!
//! Matches a kernel AST (its `SINK`) with two ranges `a` (size `m`) and
//! `b` (size `n`) of the same axis type that are adjacent, `a` first, in
//! every `END` and `REDUCE` list holding either of them, and are held by
//! exactly the same lists. Produces the AST with one range `f` of size
//! `m·n` in their place: `a = f / n`, `b = f % n`, simplified. The merge
//! is kept only if the simplified kernel has no more `/` and `%` nodes
//! than before ([`count_divmod`]); that is the case when every use of the
//! pair is `a·n + b` (a contiguous walk), which folds to `f`.
//!
//! Why it is correct: `f` in `0..m·n` visits `(f / n, f % n)` in exactly
//! the order the nested loops visited `(a, b)` (outer first), so stores
//! and accumulations happen in the same order; requiring the same lists
//! keeps every reduction's scope unchanged.

use crate::kernel::replace_range;
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher};
use crate::uop::{Op, UOp};
use std::sync::Arc;

/// The number of integer division and remainder nodes in `ast`.
pub fn count_divmod(ast: &Arc<UOp>) -> usize {
    ast.toposort()
        .iter()
        .filter(|n| matches!(n.op(), Op::Idiv | Op::Mod))
        .count()
}

/// The symbolic rules a merge is simplified with before its cost check.
pub struct MergeCtx {
    /// The scheduler's simplification rules.
    pub simplify: PatternMatcher,
}

/// The merging rule: one accepted merge per application, so the rewrite
/// engine repeats it until no pair merges.
pub fn range_merge_rules() -> PatternMatcher<MergeCtx> {
    patterns! {
        @context MergeCtx;
        @name "range-merge";
        s @ Sink(..) => merge_one_pair(s, &ctx.simplify),
    }
}

/// The first adjacent pair of `sink` whose merge passes the cost check,
/// merged.
fn merge_one_pair(sink: &Arc<UOp>, simplify: &PatternMatcher) -> Option<Arc<UOp>> {
    let nodes = sink.toposort();
    let lists: Vec<&[Arc<UOp>]> = nodes
        .iter()
        .filter(|n| matches!(n.op(), Op::End | Op::Reduce))
        .map(|n| &n.src()[1..])
        .collect();
    let before = count_divmod(sink);
    for list in &lists {
        for pair in list.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if !mergeable(a, b, &lists) {
                continue;
            }
            let (m, n) = (a.range_size()?, b.range_size()?);
            let axis = crate::kernel::next_axis_id(sink);
            let f = UOp::range(&UOp::index(m * n), axis, a.axis_type()?);
            let merged = replace_range(
                sink,
                a,
                &f.bin(Op::Idiv, &UOp::index(n)),
                std::slice::from_ref(&f),
                |x| x,
            );
            let merged = replace_range(&merged, b, &f.bin(Op::Mod, &UOp::index(n)), &[], |x| x);
            let merged = graph_rewrite(simplify, &merged, &mut ()).ok()?;
            if count_divmod(&merged) <= before {
                return Some(merged);
            }
        }
    }
    None
}

/// Whether `a, b` may merge: constant sizes whose product fits an `i32`
/// index, one axis type, and adjacent (`a` first) in every list that
/// holds either.
fn mergeable(a: &Arc<UOp>, b: &Arc<UOp>, lists: &[&[Arc<UOp>]]) -> bool {
    let (Some(m), Some(n)) = (a.range_size(), b.range_size()) else {
        return false;
    };
    if a.axis_type() != b.axis_type() || m.checked_mul(n).is_none_or(|p| p > i32::MAX as i64) {
        return false;
    }
    lists.iter().all(|list| {
        let pa = list.iter().position(|r| Arc::ptr_eq(r, a));
        let pb = list.iter().position(|r| Arc::ptr_eq(r, b));
        match (pa, pb) {
            (None, None) => true,
            (Some(i), Some(j)) => j == i + 1,
            _ => false,
        }
    })
}
