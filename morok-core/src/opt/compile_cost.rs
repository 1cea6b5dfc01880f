//! The heuristic's cap on code size: how far a kernel's last reduce axis
//! is unrolled on top of its upcast output lanes.
//!
//! Every unrolled reduce iteration repeats the kernel body once per
//! upcast lane, and the C compiler's time grows with the body it gets
//! (`-O3` on a few thousand vector statements takes a second). A small
//! reduction under a wide register tile (a softmax over 10 classes with
//! 32 rows upcast: 320 copies of an `exp` decomposition) bought nothing
//! at run time for that — the loop of 10 iterations costs a compare and
//! a branch each — but made an MLP's first call take most of a second in
//! `cc`. So the unroll is limited to [`MAX_UNROLLED_LANES`] copies of the
//! body: fully when the whole axis fits, else by 4 when that fits, else
//! not at all.

use super::kernel::OptKernel;
use crate::kernel::range_size;
use crate::uop::{AxisType, UOp};
use std::sync::Arc;

/// Most copies of the kernel body (upcast lanes × unrolled reduce
/// iterations) the heuristic's reduce unroll may produce. A 4×32 tile
/// fully unrolling a reduce of 32, and a 32-lane tile unrolled by 4, both
/// fit.
pub const MAX_UNROLLED_LANES: i64 = 128;

/// Largest reduce axis the heuristic unrolls fully.
pub const MAX_FULL_UNROLL: i64 = 32;

/// The `UNROLL` amount (`0`: the whole axis) for the last reduce axis
/// `last` of a kernel whose upcast axes multiply to `upcast_product`, or
/// `None` when even an unroll by 4 would exceed [`MAX_UNROLLED_LANES`].
pub fn reduce_unroll_amount(last: &Arc<UOp>, upcast_product: i64) -> Option<i64> {
    let lanes = upcast_product.max(1);
    match range_size(last) {
        Some(s) if s <= MAX_FULL_UNROLL && lanes.saturating_mul(s) <= MAX_UNROLLED_LANES => Some(0),
        _ if lanes * 4 <= MAX_UNROLLED_LANES => Some(4),
        _ => None,
    }
}

/// Step 5's upcast `amt` of an output axis, halved while it times the
/// kernel's unrolled reduce iterations exceeds [`MAX_UNROLLED_LANES`]
/// (down to 4): a small reduction unrolled in step 4 before the upcast
/// was known (a softmax over 10 classes of a 64-row batch) would
/// otherwise repeat its body 16 × 10 times.
pub fn cap_upcast(k: &OptKernel, amt: i64) -> i64 {
    let unrolled: i64 = k
        .ranges_of(&[AxisType::Unroll])
        .iter()
        .filter_map(|r| range_size(r))
        .product();
    let mut amt = amt;
    while amt > 4 && amt % 2 == 0 && amt.saturating_mul(unrolled) > MAX_UNROLLED_LANES {
        amt /= 2;
    }
    amt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(size: i64) -> Arc<UOp> {
        UOp::range(&UOp::index(size), 1, AxisType::Reduce)
    }

    #[test]
    fn small_reduces_unroll_fully_only_under_a_narrow_tile() {
        assert_eq!(reduce_unroll_amount(&reduce(10), 1), Some(0));
        assert_eq!(reduce_unroll_amount(&reduce(32), 4), Some(0));
        // 32 lanes × 10: by 4 fits (the opt itself refuses 4 ∤ 10)
        assert_eq!(reduce_unroll_amount(&reduce(10), 32), Some(4));
        assert_eq!(reduce_unroll_amount(&reduce(10), 64), None);
        assert_eq!(reduce_unroll_amount(&reduce(784), 4), Some(4));
    }

    /// Upcast lanes × unrolled reduce iterations of the heuristics' choice.
    fn body_copies(k: &OptKernel) -> i64 {
        k.ranges_of(&[AxisType::Upcast, AxisType::Unroll])
            .iter()
            .filter_map(|r| range_size(r))
            .product()
    }

    #[test]
    fn a_short_row_sum_stays_within_the_cap_and_keeps_its_results() {
        use crate::opt::tests::{heuristics, row_reduce, run};
        use crate::uop::ReduceOp;
        for (rows, cols) in [(64, 10), (1024, 10), (96, 7), (33, 32)] {
            let ast = row_reduce(ReduceOp::Add, rows, cols);
            let k = heuristics(&ast);
            assert!(
                body_copies(&k) <= MAX_UNROLLED_LANES,
                "{rows}x{cols}: {:?}",
                k.applied
            );
            let sizes = [rows as usize, (rows * cols) as usize];
            let (want, got) = (run(&ast, &sizes), run(&k.ast, &sizes));
            for (w, g) in want.iter().zip(&got) {
                assert!(
                    (w - g).abs() <= 1e-4 * w.abs().max(1.0),
                    "{rows}x{cols}: {w} vs {g}"
                );
            }
        }
    }
}
