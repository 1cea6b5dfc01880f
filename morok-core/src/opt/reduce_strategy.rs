//! Reduction strategies for the CPU: the `PARTIALS` opt and the heuristic
//! step that picks how a kernel's reductions use the cores' load and add
//! units.
//!
//! A reduce loop with one accumulator is a chain of dependent adds: each
//! add waits for the previous one (about 4 cycles), so a row or full sum
//! runs far below the memory bandwidth. Two shapes of reduction need two
//! answers:
//!
//! - **contiguous reduce axis** (row sums, full sums after the scheduler's
//!   split-reduce, the reductions of softmax and layernorm): `PARTIALS`
//!   splits the axis into `amt` interleaved partial reductions with one
//!   accumulator each (lane `u` reduces the elements `u, u+amt, u+2·amt,
//!   …`), combined pairwise after the loop. The lanes of one iteration read
//!   `amt` consecutive elements and their adds are independent. Lowering
//!   gives the accumulators as lanes of vectors of the host's width
//!   (`crate::lower::partial_vectors`): one vector load and add per vector,
//!   and combines them after the loop by vector adds and a halving of the
//!   lanes (another balanced order of the same partials).
//! - **strided reduce axis with a contiguous output axis** (column sums):
//!   the output axis is upcast, so one pass of the reduce loop reads a run
//!   of consecutive elements of one row into as many accumulators
//!   (reduce loop outside, output lanes inside). Each accumulator still
//!   adds its rows in order: the result is bit-exact. A large column
//!   reduction reaches this step as the scheduler's row tiles
//!   (`schedule/rangeify/split_reduce.rs`): 16 rows per pass, then the
//!   tile sums.
//!
//! Threads: the host splits the outermost output loop across its cores
//! (`Launch::parallel`); huge reductions get that loop from the
//! scheduler's split-reduce (`schedule/rangeify/split_reduce.rs`).
//!
//! **Float order.** `PARTIALS` changes the order of a float sum or
//! product (a blocked summation, as NumPy's pairwise and PyTorch's
//! vectorized sums do; its rounding error is no worse than the serial
//! loop's). The partials are combined by a balanced tree: the one
//! `apply_partials` builds (neighbours first), or on vectors the one
//! lowering builds (partial `u` first with `u + w`, then lanes `w/2`
//! apart, and so on); both have the same error bound. It is only chosen by the optimizer, never under
//! `MOROK_NOOPT=1`, and only for `f32`/`f64` floats (integer adds and
//! products wrap, so they are associative; `max`/`min` do not depend on
//! the order), never for `f16`/`bf16`, whose per-op rounding would make
//! the difference visible.

use super::access::{buffer_indices, stride};
use super::actions::try_opt;
use super::kernel::OptKernel;
use super::partials::MAX_PARTIALS;
use super::{Opt, OptOps};
use crate::caps::Caps;
use crate::kernel::{range_size, uses_range};
use crate::uop::{Arg, AxisType, Op, UOp};
use std::sync::Arc;

/// Partial accumulators the heuristic asks for on a contiguous reduce
/// axis (largest first; the first that divides the axis is used), after
/// two vectors' worth where that is more (see [`partial_amounts`]).
const PARTIAL_AMOUNTS: [i64; 4] = [16, 8, 4, 2];

/// The `PARTIALS` amounts the heuristic tries on reduce range `r`, largest
/// first: two vectors of the target's lanes for the reduced type where
/// that is more than 16 (32 for `f32` on AVX-512), then
/// [`PARTIAL_AMOUNTS`]. Lowering makes the partials vector accumulators
/// (`crate::lower::partial_vectors`); with one, each pass of the reduce
/// loop waits on the previous pass's vector add (a row of layernorm read
/// from L1 is bound by that chain), with two the passes overlap. On AVX2
/// the first amount, 16, is two vectors already. A reduction whose value
/// holds a transcendental (`Caps::DECOMPOSABLE`: softmax's sum of exps)
/// keeps one vector: its decomposition, dozens of vector ops a pass,
/// hides the add chain already, and a second copy of it would double the
/// kernel's code and compile time.
fn partial_amounts(k: &OptKernel, r: &Arc<UOp>) -> Vec<i64> {
    let itemsize = k
        .ast
        .toposort()
        .iter()
        .find(|n| n.op() == Op::Reduce && n.src()[1..].iter().any(|x| Arc::ptr_eq(x, r)))
        .filter(|n| {
            !n.s(0)
                .toposort()
                .iter()
                .any(|v| Caps::DECOMPOSABLE.contains(&v.op()))
        })
        .map_or(0, |n| n.dtype().scalar_type().itemsize() as i64);
    let two_vectors = match itemsize {
        0 => 0,
        size => 2 * i64::from(k.target.vector_bytes) / size,
    };
    let mut amounts = Vec::from(PARTIAL_AMOUNTS);
    if two_vectors > amounts[0] && two_vectors <= MAX_PARTIALS {
        amounts.insert(0, two_vectors);
    }
    amounts
}

/// A reduce axis shorter than this is left to the plain unroll (a loop of
/// a few iterations gains nothing from more accumulators).
pub const MIN_PARTIAL_AXIS: i64 = 64;

/// Output lanes the heuristic upcasts on a column reduction: the first
/// of these that divides the axis, then the first of
/// [`COLUMN_MORE`] that divides what is left, up to [`COLUMN_LANES`]
/// lanes in all.
const COLUMN_AMOUNTS: [i64; 3] = [16, 8, 4];

/// The second upcast of a column reduction's output axis.
const COLUMN_MORE: [i64; 2] = [4, 2];

/// Most output lanes of a column reduction: 64 floats are 4 cache lines
/// of a row per pass of the reduce loop; fewer leave the loop waiting on
/// one line of memory at a time (one thread over a 4096² column sum
/// measured 36 ms with 16 lanes, 22 ms with 32, 10 ms with 64, the same
/// as a row sum's streaming read; more lanes gain nothing).
pub const COLUMN_LANES: i64 = 64;

/// How a reduce range is read by the loads that use it.
enum Access {
    /// Every load using it steps by one element.
    Contiguous,
    /// No load using it steps by one, and every one of them steps by one
    /// along this output range (position in [`OptKernel::ranges`]).
    Columns(usize),
    /// Anything else (mixed strides as in a matmul, gathers).
    Other,
}

/// Classifies reduce range `r` by the strides of the loads using it.
fn access(k: &OptKernel, r: &Arc<UOp>) -> Access {
    let ranges = k.ranges();
    let indices: Vec<Arc<UOp>> = buffer_indices(&k.ast)
        .into_iter()
        .filter(|idx| uses_range(idx, r))
        .collect();
    if indices.is_empty() {
        return Access::Other;
    }
    let strides: Vec<Option<i64>> = indices.iter().map(|i| stride(i, r, &ranges)).collect();
    if strides.iter().all(|s| *s == Some(1)) {
        return Access::Contiguous;
    }
    if strides.iter().any(|s| s.is_none_or(|s| s == 1)) {
        return Access::Other;
    }
    ranges
        .iter()
        .position(|o| {
            o.axis_type() == Some(AxisType::Loop)
                && indices.iter().all(|i| stride(i, o, &ranges) == Some(1))
        })
        .map_or(Access::Other, Access::Columns)
}

/// The heuristic's reduction step (in place of the plain unroll): a
/// column reduction with nothing upcast yet gets its contiguous output
/// axis upcast by 16 (or 8, 4) and then by 4 (or 2), up to
/// [`COLUMN_LANES`] lanes; every contiguous reduce axis of at least
/// [`MIN_PARTIAL_AXIS`] elements gets `PARTIALS` of two vectors (see
/// `partial_amounts`), else 16 (or 8, 4, 2).
/// Returns true if it applied an opt (the caller then skips the unroll).
pub fn choose_reduce_strategy(k: &mut OptKernel) -> bool {
    let mut applied = false;
    let ids: Vec<usize> = k
        .ranges_of(&[AxisType::Reduce])
        .iter()
        .filter_map(|r| match r.arg() {
            Arg::Range { axis_id, .. } => Some(*axis_id),
            _ => None,
        })
        .collect();
    for id in ids {
        let reduces = k.ranges_of(&[AxisType::Reduce]);
        let Some(pos) = reduces
            .iter()
            .position(|r| matches!(r.arg(), Arg::Range { axis_id, .. } if *axis_id == id))
        else {
            continue;
        };
        let r = reduces[pos].clone();
        match access(k, &r) {
            Access::Contiguous => {
                let size = range_size(&r).unwrap_or(0);
                if size < MIN_PARTIAL_AXIS {
                    continue;
                }
                applied |= partial_amounts(k, &r).iter().any(|&amt| {
                    size % amt == 0 && try_opt(k, Opt::new(OptOps::Partials, pos, amt))
                });
            }
            Access::Columns(out) if k.ranges_of(&[AxisType::Upcast]).is_empty() => {
                let size = range_size(&k.ranges()[out]).unwrap_or(0);
                let Some(&first) = COLUMN_AMOUNTS.iter().find(|&&amt| {
                    size % amt == 0 && try_opt(k, Opt::new(OptOps::Upcast, out, amt))
                }) else {
                    continue;
                };
                applied = true;
                let left = size / first;
                COLUMN_MORE.iter().any(|&amt| {
                    left % amt == 0
                        && left > amt
                        && first * amt <= COLUMN_LANES
                        && try_opt(k, Opt::new(OptOps::Upcast, out, amt))
                });
            }
            _ => {}
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::lower::tests::{load, range};
    use crate::opt::apply_opts;
    use crate::opt::tests::{cpu, heuristics, row_reduce, run, softmax, store, typed_row_reduce};
    use crate::uop::ReduceOp;
    use OptOps::*;

    /// Asserts `got` equals `want` within `rel` relative error (the
    /// interpreter rounds every f32 add, so a changed order differs in
    /// the last bits).
    fn near(got: &[f64], want: &[f64], rel: f64) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= rel * (1.0 + w.abs()), "{g} vs {w}");
        }
    }

    /// out[j] = sum_i x[i*cols + j]: the reduce axis is strided.
    fn column_sum(rows: i64, cols: i64) -> Arc<UOp> {
        let j = range(cols, 0, AxisType::Loop);
        let r = range(rows, 1, AxisType::Reduce);
        let v = load(1, &r.mul(&UOp::index(cols)).add(&j))
            .reduce(ReduceOp::Add, std::slice::from_ref(&r));
        UOp::sink(vec![store(&j, &v).end(&[j])])
    }

    /// out = sum_{c, r} x[c*len + r]: the first stage of a split full sum.
    fn chunk_sum(chunks: i64, len: i64) -> Arc<UOp> {
        let c = range(chunks, 0, AxisType::Loop);
        let r = range(len, 1, AxisType::Reduce);
        let v = load(1, &c.mul(&UOp::index(len)).add(&r))
            .reduce(ReduceOp::Add, std::slice::from_ref(&r));
        UOp::sink(vec![store(&c, &v).end(&[c])])
    }

    #[test]
    fn partials_keep_sums_close_and_max_exact() {
        for (rows, len) in [(3, 64), (5, 96), (1, 4096)] {
            let sizes = [rows as usize, (rows * len) as usize];
            let sum = row_reduce(ReduceOp::Add, rows, len);
            let want = run(&sum, &sizes);
            for amt in [2, 8, 16, 32] {
                let out = apply_opts(&sum, &[Opt::new(Partials, 0, amt)], &cpu()).unwrap();
                crate::lower::validate::validate(&out).expect("a valid kernel AST");
                near(&run(&out, &sizes), &want, 1e-4);
            }
            let max = row_reduce(ReduceOp::Max, rows, len);
            let out = apply_opts(&max, &[Opt::new(Partials, 0, 16)], &cpu()).unwrap();
            assert_eq!(run(&out, &sizes), run(&max, &sizes));
        }
        // the whole axis, and an unroll of what is left
        let sum = row_reduce(ReduceOp::Add, 4, 32);
        let out = apply_opts(&sum, &[Opt::new(Partials, 0, 0)], &cpu()).unwrap();
        near(&run(&out, &[4, 128]), &run(&sum, &[4, 128]), 1e-4);
        let out = apply_opts(
            &sum,
            &[Opt::new(Partials, 0, 8), Opt::new(Unroll, 0, 2)],
            &cpu(),
        )
        .unwrap();
        near(&run(&out, &[4, 128]), &run(&sum, &[4, 128]), 1e-4);
    }

    #[test]
    fn partials_are_refused_where_the_order_or_the_shape_forbids() {
        let refused = |ast: &Arc<UOp>, opt: Opt, why: &str| {
            let e = apply_opts(ast, &[opt], &cpu())
                .expect_err("refused")
                .to_string();
            assert!(e.contains(why), "{e}");
        };
        let sum = row_reduce(ReduceOp::Add, 4, 96);
        refused(&sum, Opt::new(Partials, 0, 7), "does not divide");
        refused(&sum, Opt::new(Partials, 0, 48), "above 32");
        refused(&sum, Opt::new(Partials, 1, 2), "does not exist");
        // half sums round after every add: their order stays
        let half = typed_row_reduce(DType::F16, ReduceOp::Add, 4, 64);
        refused(
            &half,
            Opt::new(Partials, 0, 4),
            "PARTIALS of a Add reduction",
        );
    }

    #[test]
    fn the_strategy_splits_contiguous_reductions() {
        // a long row sum: 16 partial accumulators, no unroll
        let sum = row_reduce(ReduceOp::Add, 8, 4096);
        let k = heuristics(&sum);
        assert_eq!(k.applied, vec![Opt::new(Partials, 0, 16)]);
        near(
            &run(&k.ast, &[8, 8 * 4096]),
            &run(&sum, &[8, 8 * 4096]),
            1e-4,
        );
        // the chunks of a split full sum, and 8 when 16 does not divide
        // (2^20 iterations: also the 4 threads the test limits allow)
        let k = heuristics(&chunk_sum(256, 4096));
        assert_eq!(
            k.applied,
            vec![Opt::new(Partials, 0, 16), Opt::new(Thread, 0, 4)]
        );
        let odd = chunk_sum(3, 200);
        let k = heuristics(&odd);
        assert_eq!(k.applied, vec![Opt::new(Partials, 0, 8)]);
        near(&run(&k.ast, &[3, 600]), &run(&odd, &[3, 600]), 1e-4);
        // a prime length has no split: the plain heuristics
        let prime = row_reduce(ReduceOp::Add, 5, 67);
        let k = heuristics(&prime);
        assert!(!k.applied.iter().any(|o| o.op == Partials));
        assert_eq!(run(&k.ast, &[5, 335]), run(&prime, &[5, 335]));
        // softmax: both of its reductions (the sum holds the max)
        let sm = softmax(4, 128);
        let k = heuristics(&sm);
        let partials = k.applied.iter().filter(|o| o.op == Partials).count();
        assert_eq!(partials, 2, "{:?}", k.applied);
        near(&run(&k.ast, &[512, 512]), &run(&sm, &[512, 512]), 1e-4);
        // a matmul keeps its register tile (mixed strides on the reduce)
        let mm = crate::opt::tests::matmul(32, 64, 32);
        assert!(!heuristics(&mm).applied.iter().any(|o| o.op == Partials));
    }

    #[test]
    fn the_strategy_upcasts_the_columns_of_a_column_sum() {
        // 2^18 iterations: 4 threads (the limit) over the column blocks
        let wide = vec![
            Opt::new(Upcast, 0, 16),
            Opt::new(Upcast, 0, 4),
            Opt::new(Thread, 0, 4),
        ];
        for (rows, cols, opts) in [
            (64, 4096, wide),
            (37, 24, vec![Opt::new(Upcast, 0, 8)]),
            (5, 1028, vec![Opt::new(Upcast, 0, 4)]),
            (7, 96, vec![Opt::new(Upcast, 0, 16), Opt::new(Upcast, 0, 2)]),
        ] {
            let cs = column_sum(rows, cols);
            let k = heuristics(&cs);
            assert_eq!(k.applied, opts, "{rows}x{cols}");
            let sizes = [cols as usize, (rows * cols) as usize];
            // every column still adds its rows in order: exact
            assert_eq!(run(&k.ast, &sizes), run(&cs, &sizes));
        }
        // a prime column count: no upcast divides it, results unchanged
        let cs = column_sum(16, 131);
        let k = heuristics(&cs);
        assert!(!k.applied.iter().any(|o| o.op == Upcast));
        assert_eq!(run(&k.ast, &[131, 16 * 131]), run(&cs, &[131, 16 * 131]));
    }
}
