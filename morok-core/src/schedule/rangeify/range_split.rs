//! Range splitting: a loop read through `r % c` (or `r / c`) becomes two
//! loops.
//!
//! Matches, in a kernel AST, a `RANGE r` of constant size `n` used as
//! `r % c` or `r / c` with a constant `c` that divides `n` (`1 < c < n`).
//! The range is replaced by an outer range `o` of size `n / c` and an
//! inner range `i` of size `c`: as a value `r = o·c + i`, in `END` and
//! `REDUCE` lists by the pair `o, i` (outer first). Then `r % c = i` and
//! `r / c = o` fold away with the symbolic rules, so the body indexes with
//! plain ranges that the optimizer can upcast or thread.
//!
//! Why it is correct: `o·c + i` for `o` in `0..n/c` and `i` in `0..c`,
//! inner fastest, enumerates `0..n` once each in increasing order, so every
//! store runs for the same values and every reduction accumulates in the
//! same order (bit-identical results).
//!
//! Like the seed's `pm_split_ranges`, the rules only *collect* candidate
//! ranges while the graph is walked bottom-up and split them all when the
//! walk reaches the `SINK`, so no partial rewrite is ever seen. The split
//! is kept only if the kernel's divisions and remainders do not increase
//! ([`count_divmod`]).

use super::range_merge::count_divmod;
use crate::kernel::replace_range;
use crate::patterns;
use crate::rewrite::{graph_rewrite, graph_rewrite_bottom_up, PatternMatcher, RewriteError};
use crate::uop::{ConstValue, Op, UOp};
use std::sync::Arc;

/// The ranges seen used as `r % c` or `r / c`, with the first divisor
/// seen for each.
#[derive(Default)]
pub struct SplitCandidates {
    marks: Vec<(Arc<UOp>, i64)>,
}

impl SplitCandidates {
    fn mark(&mut self, r: &Arc<UOp>, c: ConstValue) -> Option<Arc<UOp>> {
        let (Some(n), Some(c)) = (r.range_size(), c.as_i64()) else {
            return None;
        };
        let fresh = !self.marks.iter().any(|(m, _)| Arc::ptr_eq(m, r));
        if fresh && c > 1 && c < n && n % c == 0 {
            self.marks.push((r.clone(), c));
        }
        None
    }
}

/// The collecting rules and the `SINK` rule that splits what they found.
pub fn range_split_rules() -> PatternMatcher<SplitCandidates> {
    patterns! {
        @context SplitCandidates;
        @name "range-split";
        Mod(r @ Range(..), @const(c)) => ctx.mark(r, c),
        Idiv(r @ Range(..), @const(c)) => ctx.mark(r, c),
        s @ Sink(..) => split_marked(s, ctx),
    }
}

/// Splits every marked range of `sink` (see the module docs). The marks
/// are consumed, so the rewrite of the result starts afresh.
fn split_marked(sink: &Arc<UOp>, ctx: &mut SplitCandidates) -> Option<Arc<UOp>> {
    if ctx.marks.is_empty() {
        return None;
    }
    let mut ast = sink.clone();
    let mut next_axis = crate::kernel::next_axis_id(sink);
    for (r, c) in std::mem::take(&mut ctx.marks) {
        let n = r.range_size()?;
        let axis_type = r.axis_type()?;
        let outer = UOp::range(&UOp::index(n / c), next_axis, axis_type);
        let inner = UOp::range(&UOp::index(c), next_axis + 1, axis_type);
        next_axis += 2;
        let value = outer.mul(&UOp::index(c)).add(&inner);
        ast = replace_range(&ast, &r, &value, &[outer, inner], |n| n);
    }
    Some(ast)
}

/// Range splitting on one kernel AST: split, simplify with `simplify`, and
/// keep the result when it has no more divisions and remainders than the
/// input.
pub fn split_ranges(ast: &Arc<UOp>, simplify: &PatternMatcher) -> Result<Arc<UOp>, RewriteError> {
    if !ast
        .toposort()
        .iter()
        .any(|n| matches!(n.op(), Op::Mod | Op::Idiv) && n.s(0).op() == Op::Range)
    {
        return Ok(ast.clone());
    }
    let split =
        graph_rewrite_bottom_up(&range_split_rules(), ast, &mut SplitCandidates::default())?;
    let split = graph_rewrite(simplify, &split, &mut ())?;
    Ok(if count_divmod(&split) <= count_divmod(ast) {
        split
    } else {
        ast.clone()
    })
}
