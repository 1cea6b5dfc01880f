//! The one work estimate of a kernel: how many iterations its loop nest
//! runs. The optimizer's thread step plans `THREAD` axes by it and the
//! launch decides how many threads share a parallel loop by it, so both
//! follow one rule (`MIN_WORK_PER_THREAD` iterations per thread).

use crate::uop::{Op, UOp};
use std::sync::Arc;

/// Fewest iterations of a kernel's loop nest each thread must run: below
/// it, waking a thread costs more than it saves. The optimizer plans a
/// `THREAD` axis of `t` only for kernels of at least `t` times this, and
/// a CPU host shares a parallel loop among that many threads at most.
pub const MIN_WORK_PER_THREAD: u64 = 1 << 15;

/// How many threads a loop nest of `iterations` iterations is worth, at
/// most `max_threads` (and at least one): every thread gets
/// [`MIN_WORK_PER_THREAD`] iterations or more.
pub fn threads_for_work(iterations: u64, max_threads: usize) -> usize {
    let by_work = usize::try_from(iterations / MIN_WORK_PER_THREAD).unwrap_or(usize::MAX);
    max_threads.min(by_work).max(1)
}

/// Iterations of the kernel's whole loop nest: the product of its
/// constant range sizes (ranges of unknown size count as one). Range
/// splits keep it; `PARTIALS` moves iterations into lanes, so the
/// heuristics take it before any opt.
pub fn loop_nest_iterations(ast: &Arc<UOp>) -> u64 {
    ast.toposort()
        .iter()
        .filter(|n| n.op() == Op::Range)
        .filter_map(|r| r.range_size())
        .fold(1u64, |a, s| {
            a.saturating_mul(u64::try_from(s.max(1)).unwrap_or(u64::MAX))
        })
}

#[cfg(test)]
mod tests {
    use super::loop_nest_iterations;
    use crate::uop::{AxisType, UOp};

    #[test]
    fn iterations_multiply_the_constant_ranges() {
        let a = UOp::range(&UOp::index(6), 0, AxisType::Loop);
        let b = UOp::range(&UOp::index(7), 1, AxisType::Reduce);
        let both = a.add(&b);
        assert_eq!(loop_nest_iterations(&both), 42);
        assert_eq!(loop_nest_iterations(&UOp::index(3)), 1);
    }

    #[test]
    fn threads_get_their_minimum_of_work() {
        use super::{threads_for_work, MIN_WORK_PER_THREAD};
        assert_eq!(threads_for_work(0, 8), 1);
        assert_eq!(threads_for_work(2 * MIN_WORK_PER_THREAD - 1, 8), 1);
        assert_eq!(threads_for_work(3 * MIN_WORK_PER_THREAD, 8), 3);
        assert_eq!(threads_for_work(u64::MAX, 8), 8);
    }
}
