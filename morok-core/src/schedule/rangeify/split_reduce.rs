//! Split reductions into two kernels (tensor level). Two rules, both
//! producing
//!
//! ```text
//! RESHAPE(REDUCE_AXIS(op, [a])(CONTIGUOUS(REDUCE_AXIS(op, axes')(RESHAPE(x, …, d, n/d, …)))), out shape)
//! ```
//!
//! for a reduced axis `a` of size `n` and a divisor `d` of it: the first
//! stage reduces `d` contiguous chunks of `n/d` elements each (axis `a`
//! split into `(d, n/d)`, the chunk axis and the other reduced axes
//! reduced), the second combines the `d` partial results. Correct because
//! the reduction op is associative and commutative (for floats up to
//! rounding; the row tile split only changes orders the optimizer may
//! change, see [`reorderable`]).
//!
//! - **Huge reductions** ([`SPLIT_THRESHOLD`]): a `REDUCE_AXIS` whose input
//!   has that many times more elements than its output, split on an axis
//!   that is not a broadcast into the fewest chunks `d` (at least 8) for
//!   which neither stage is huge (see `single_split`), else with `d` in
//!   `8..=256` (largest first), the first stage then split again. The
//!   first stage has `d` times more output parallelism; without the split
//!   a single output element would carry the whole loop.
//! - **Row tiles of a column reduction** ([`COLUMN_SPLIT_MIN`]): a
//!   reduction of at least that many input elements whose reduced axes
//!   are followed by at least [`MIN_INNER`] kept contiguous elements (a
//!   column sum, a sum over the middle axis) and whose input broadcasts
//!   nothing (see `broadcasts`: not a matmul), split on its outermost
//!   reduced axis (of at least [`MIN_ROWS`]) into tiles of `n/d` = 16 (or
//!   8, 4) rows. A column
//!   reduction read in place walks down the rows: one short run of every
//!   row per pass, a new page each step, and the output axis is all the
//!   cores can share. The first stage reads a tile of 16 rows in the same
//!   few-columns-at-a-time order, so the memory sees 16 sequential streams
//!   and each thread owns a contiguous slab of tiles; its output is 1/16
//!   of the input (small enough to stay in the last-level cache for the
//!   second stage, a column reduction of `d` rows).

use crate::kernel::reorderable;
use crate::patterns;
use crate::rewrite::{PatternMatcher, RuleError};
use crate::shape::numel;
use crate::uop::tensor_shape;
use crate::uop::{Arg, Op, ReduceOp, Shape, UOp};
use smallvec::smallvec;
use std::sync::Arc;

/// Input/output element ratio from which a reduction is split.
pub const SPLIT_THRESHOLD: usize = 32768;

/// Input elements from which a column reduction is split into row tiles
/// (8 MiB of `f32`: well beyond the per-core caches, where walking down
/// the columns stops being cheap).
pub const COLUMN_SPLIT_MIN: usize = 1 << 21;

/// Fewest kept contiguous elements after the reduced axes for the row
/// tile split (one AVX-512 vector of `f32`).
pub const MIN_INNER: usize = 16;

/// Rows per tile of the row tile split, largest first (the first that
/// divides the axis is used).
const TILE_ROWS: [usize; 3] = [16, 8, 4];

/// Fewest rows (the size of the outermost reduced axis) for the row tile
/// split: at least four tiles of 16, and the tile axis of a first stage
/// is never split again.
pub const MIN_ROWS: usize = 64;

/// The split-reduce rule set.
pub fn split_reduce_rules() -> PatternMatcher {
    patterns! {
        @name "split-reduce";
        n @ ReduceAxis(_) => try {
            let shapes = tensor_shape(n.s(0)).and_then(|i| Ok((i, tensor_shape(n)?)));
            shapes
                .map(|(i, o)| split(n, &i, &o).or_else(|| split_columns(n, &i, &o)))
                .map_err(|e| RuleError::new(e.to_string()))
        },
    }
}

/// True if axis `a` of `n`'s input (shape `in_shape`) is a broadcast: it
/// holds one value, and splitting it buys nothing.
fn broadcast_axis(n: &Arc<UOp>, in_shape: &Shape, a: usize) -> bool {
    let x = n.s(0);
    x.op() == Op::Expand && tensor_shape(x.s(0)).is_ok_and(|s| s[a] == 1 && in_shape[a] != 1)
}

/// The huge-reduction split of `n` (input shape `in_shape`, output shape
/// `out_shape`), if it is worth one.
fn split(n: &Arc<UOp>, in_shape: &Shape, out_shape: &Shape) -> Option<Arc<UOp>> {
    let Arg::ReduceAxis(op, axes) = n.arg() else {
        return None;
    };
    let out_numel = numel(out_shape).max(1);
    let ratio = fused_input_elements(n.s(0), in_shape) / out_numel;
    if ratio < SPLIT_THRESHOLD {
        return None;
    }
    // The first stage writes at most 2^22 elements.
    let max_chunks = (1usize << 22) / out_numel;
    let axes_to_split = || {
        axes.iter()
            .copied()
            .filter(|&a| !broadcast_axis(n, in_shape, a))
    };
    let splits = |a: usize, d: usize| in_shape[a].is_multiple_of(d) && in_shape[a] / d > 1;
    let (a, d) = single_split(ratio, max_chunks, axes_to_split(), splits).or_else(|| {
        let max_d = MAX_CHUNKS.min(max_chunks);
        axes_to_split()
            .flat_map(|a| (MIN_CHUNKS..=max_d).rev().map(move |d| (a, d)))
            .find(|&(a, d)| splits(a, d))
    })?;
    Some(two_stages(n, (*op, axes), (in_shape, out_shape), a, d))
}

/// The elements a reduction over `x` (of shape `in_shape`) reads: `x`'s
/// own, or more when `x` is computed by reductions in the same kernel
/// without broadcasting (up to the buffers it reads: BUFFER, CONTIGUOUS),
/// the largest input among them. `x.sum(1).sum()` over 4096² is a full
/// sum of 2^24 elements although its outer reduction sees only 4096 of
/// them: without this the two reductions fuse into one kernel with a
/// single output and one thread carries all 2^24 adds. A broadcast
/// (`(a@b).sum()`) is left as it is: its inner reduction is a matmul, for
/// the optimizer's tiles (see `broadcasts`). A walk of one kernel's
/// source graph with `toposort_until`, as in `broadcasts`.
fn fused_input_elements(x: &Arc<UOp>, in_shape: &Shape) -> usize {
    let own = numel(in_shape);
    if broadcasts(x) {
        return own;
    }
    x.toposort_until(|u| matches!(u.op(), Op::Buffer | Op::Contiguous))
        .iter()
        .filter(|u| u.op() == Op::ReduceAxis)
        .filter_map(|u| tensor_shape(u.s(0)).ok())
        .map(|s| numel(&s))
        .fold(own, usize::max)
}

/// Fewest chunks a huge reduction is split into.
const MIN_CHUNKS: usize = 8;

/// Most chunks of the fallback split, used when no single split exists
/// (see `single_split`); its first stage may be split again.
const MAX_CHUNKS: usize = 256;

/// The split of a huge reduction (`ratio` input elements per output, at
/// most `max_chunks` chunks per output) into the fewest chunks `d` for
/// which neither stage is huge: each chunk has fewer than
/// [`SPLIT_THRESHOLD`] elements and so do the `d` partial results the
/// second stage combines. `splits(a, d)` says whether axis `a` divides into
/// `d` chunks. The smallest such `d` over `axes`, or `None` when there is
/// none (the caller then splits by up to `MAX_CHUNKS` and lets the rule
/// split the first stage again).
///
/// One split is the whole job: a 4096² full sum becomes 1024 chunk sums of
/// 16384 elements and one kernel over them, instead of 256 chunks split
/// again into 2048 and three kernels, each one more launch (and compile)
/// for no more parallelism. Fewest chunks: each chunk stays one long
/// contiguous stream, and there are still `ratio / SPLIT_THRESHOLD` of
/// them per output for the threads.
fn single_split(
    ratio: usize,
    max_chunks: usize,
    axes: impl Iterator<Item = usize>,
    splits: impl Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    let fewest = (ratio / SPLIT_THRESHOLD + 1).max(MIN_CHUNKS);
    let most = (SPLIT_THRESHOLD - 1).min(max_chunks);
    axes.filter_map(|a| (fewest..=most).find(|&d| splits(a, d)).map(|d| (a, d)))
        .min_by_key(|&(_, d)| d)
}

/// True if the computation feeding a reduction (up to the buffers it
/// reads: BUFFER, CONTIGUOUS) broadcasts some operand (an EXPAND). Such a
/// reduction re-reads its operands (a matmul's `a[m, k]·b[k, n]` summed
/// over `k`) and is bound by arithmetic and cache reuse, which the
/// optimizer's tiles handle; the row tile split is for reductions that
/// read each input element once (memory-bound column sums). A walk of one
/// kernel's source graph with `toposort_until` (a pattern cannot ask about
/// a whole subgraph).
fn broadcasts(x: &Arc<UOp>) -> bool {
    x.toposort_until(|u| matches!(u.op(), Op::Buffer | Op::Contiguous))
        .iter()
        .any(|u| u.op() == Op::Expand)
}

/// The row tile split of a column reduction `n` (see the module docs),
/// if it applies.
fn split_columns(n: &Arc<UOp>, in_shape: &Shape, out_shape: &Shape) -> Option<Arc<UOp>> {
    let Arg::ReduceAxis(op, axes) = n.arg() else {
        return None;
    };
    let (&a, &last) = (axes.iter().min()?, axes.iter().max()?);
    let inner: usize = in_shape[last + 1..].iter().product();
    if inner < MIN_INNER
        || numel(in_shape) < COLUMN_SPLIT_MIN
        || !reorderable(*op, n.dtype())
        || broadcasts(n.s(0))
    {
        return None;
    }
    let size = in_shape[a];
    if size < MIN_ROWS {
        return None;
    }
    let rows = TILE_ROWS.into_iter().find(|&r| size.is_multiple_of(r))?;
    Some(two_stages(
        n,
        (*op, axes),
        (in_shape, out_shape),
        a,
        size / rows,
    ))
}

/// `n` (reducing with `op` over `axes`, input and output shapes
/// `shapes`) as two stages with reduced axis `a` split into `d` chunks
/// (see the module docs).
fn two_stages(
    n: &Arc<UOp>,
    (op, axes): (ReduceOp, &[usize]),
    (in_shape, out_shape): (&Shape, &Shape),
    a: usize,
    d: usize,
) -> Arc<UOp> {
    let x = n.s(0);
    let mut split_shape: Shape = in_shape.clone();
    split_shape[a] = in_shape[a] / d;
    split_shape.insert(a, d);
    let reshaped = UOp::new(
        Op::Reshape,
        x.dtype(),
        smallvec![x.clone()],
        Arg::Shape(split_shape),
    );
    // Axes after `a` move one to the right; `a` itself becomes the chunk axis a+1.
    let stage1_axes = axes
        .iter()
        .map(|&b| if b >= a { b + 1 } else { b })
        .collect();
    let stage1 = UOp::new(
        Op::ReduceAxis,
        n.dtype(),
        smallvec![reshaped],
        Arg::ReduceAxis(op, stage1_axes),
    );
    let contiguous = UOp::new(Op::Contiguous, n.dtype(), smallvec![stage1], Arg::None);
    let stage2 = UOp::new(
        Op::ReduceAxis,
        n.dtype(),
        smallvec![contiguous],
        Arg::ReduceAxis(op, smallvec![a]),
    );
    UOp::new(
        Op::Reshape,
        n.dtype(),
        smallvec![stage2],
        Arg::Shape(out_shape.clone()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `splits` for an input of `shape`, as `split` asks it.
    fn divides(shape: &[usize]) -> impl Fn(usize, usize) -> bool + '_ {
        move |a, d| shape[a].is_multiple_of(d) && shape[a] / d > 1
    }

    #[test]
    fn single_split_takes_the_fewest_chunks_below_the_threshold() {
        let full = [4096, 4096];
        // 2^24 elements: more than 512 chunks, so 1024 rows of 4.
        let got = single_split(1 << 24, 1 << 22, 0..2, divides(&full));
        assert_eq!(got, Some((0, 1024)));
        // At the threshold itself: the fewest chunks allowed.
        let got = single_split(SPLIT_THRESHOLD, 1 << 22, 0..1, divides(&[SPLIT_THRESHOLD]));
        assert_eq!(got, Some((0, MIN_CHUNKS)));
        // 1000 has no divisor in 501..1000: the next axis splits.
        let got = single_split(1000 * 16384, 1 << 22, 0..2, divides(&[1000, 16384]));
        assert_eq!(got, Some((1, 512)));
    }

    #[test]
    fn single_split_declines_where_no_divisor_fits() {
        // A prime axis has no divisor; chunks beyond `max_chunks` are not allowed.
        let prime = 8_388_617;
        assert_eq!(single_split(prime, 1 << 22, 0..1, divides(&[prime])), None);
        assert_eq!(
            single_split(1 << 24, 256, 0..2, divides(&[4096, 4096])),
            None
        );
    }
}
