//! The heuristic's thread step: a `THREAD` axis for kernels large enough
//! to pay for waking the cores.
//!
//! A `THREAD` axis is a top split of an output (`LOOP`) axis: the new range
//! of size `t` becomes the kernel's outermost loop and each of its values
//! owns a contiguous block of the old axis. Lowering reports it as the
//! parallel loop (`Launch::parallel`) and the CPU host runs its `t`
//! iterations on up to `t` cores. Without it the host still splits the
//! outermost output loop, but only as finely as that loop's trip count
//! allows: a kernel of shape `[2, 100000]` would use two cores out of
//! sixteen. The step picks:
//!
//! - the count: the largest `t ≤ Target::threads` (the device's
//!   cap, `MOROK_THREADS` on the CPU) such that every thread still runs at
//!   least [`crate::kernel::MIN_WORK_PER_THREAD`] iterations of the kernel's loops;
//!   kernels smaller than twice that get no axis (one thread);
//! - the axis: the first `LOOP` axis (outermost first) that `t` divides.
//!   Reduce, upcast and unrolled axes are never split (the `THREAD` opt
//!   refuses them), so no reduction changes its order: results are
//!   bit-identical for every thread count.

use super::actions::try_opt;
use super::kernel::OptKernel;
use super::{Opt, OptOps};
use crate::kernel::{range_size, threads_for_work};
use crate::uop::AxisType;

/// Applies one `THREAD` opt as described in the module docs, for a
/// kernel of `iterations` loop-nest iterations
/// ([`crate::kernel::loop_nest_iterations`] of the unoptimized kernel); returns whether
/// one was applied.
pub fn thread_outer_axis(k: &mut OptKernel, iterations: u64) -> bool {
    if k.target.threads < 2 || !k.ranges_of(&[AxisType::Thread]).is_empty() {
        return false;
    }
    let cap = i64::try_from(threads_for_work(iterations, k.target.threads)).unwrap_or(1);
    for t in (2..=cap).rev() {
        let ranges = k.ranges();
        let axis = ranges.iter().position(|r| {
            r.axis_type() == Some(AxisType::Loop) && range_size(r).is_some_and(|s| s % t == 0)
        });
        if let Some(axis) = axis {
            if try_opt(k, Opt::new(OptOps::Thread, axis, t)) {
                return true;
            }
        }
    }
    false
}
