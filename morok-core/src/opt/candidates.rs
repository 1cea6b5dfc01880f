//! The search space of a beam search: every action it tries and the
//! kernels one action away from a kernel. Pure functions of the kernel and
//! its target; the search itself (building and timing candidates on a
//! device) is a driver outside core (`morok_backends::beam`).

use super::kernel::OptKernel;
use super::{apply_opt, Opt, OptArg, OptOps};
use crate::kernel::range_size;
use crate::uop::AxisType;

/// Most lanes of `UPCAST` × `UNROLL` a candidate may have (its register
/// budget: larger tiles spill and take long to compile).
pub const MAX_UPCAST: i64 = 256;

/// Amounts tried for `UPCAST` (`0` = the whole axis; 8 and 16 are AVX2 and
/// AVX-512 float vectors).
const UPCAST_AMOUNTS: [i64; 7] = [0, 2, 3, 4, 5, 8, 16];
/// Amounts tried for `UNROLL`.
const UNROLL_AMOUNTS: [i64; 5] = [0, 2, 4, 7, 8];
/// Amounts tried for `THREAD` (the target caps them at its core count).
const THREAD_AMOUNTS: [i64; 8] = [2, 3, 4, 8, 12, 16, 32, 64];
/// Amounts tried for `LOCAL` (targets with workgroups).
const LOCAL_AMOUNTS: [i64; 6] = [2, 3, 4, 8, 16, 32];
/// Amounts tried for `GROUP`/`GROUPTOP` (targets with shared memory).
const GROUP_AMOUNTS: [i64; 4] = [0, 4, 8, 16];

/// Every action the search tries, in a fixed order (the target's validity
/// rules reject the ones that do not apply to a given kernel).
pub fn search_actions() -> Vec<Opt> {
    // Tensor cores first (only a kernel's first opt may be one), each
    // pair of output axes they could take.
    let mut v: Vec<Opt> = (0..4)
        .map(|axis| Opt {
            op: OptOps::Tc,
            axis: Some(axis),
            arg: OptArg::Tc(-1, 1, 1),
        })
        .collect();
    for axis in 0..8 {
        v.extend(UPCAST_AMOUNTS.map(|a| Opt::new(OptOps::Upcast, axis, a)));
    }
    for axis in 0..5 {
        v.extend(UNROLL_AMOUNTS.map(|a| Opt::new(OptOps::Unroll, axis, a)));
    }
    for axis in 0..3 {
        v.extend(THREAD_AMOUNTS.map(|a| Opt::new(OptOps::Thread, axis, a)));
    }
    for axis in 0..6 {
        v.extend(LOCAL_AMOUNTS.map(|a| Opt::new(OptOps::Local, axis, a)));
    }
    for axis in 0..3 {
        v.extend(GROUP_AMOUNTS.map(|a| Opt::new(OptOps::GroupTop, axis, a)));
        v.extend(GROUP_AMOUNTS.map(|a| Opt::new(OptOps::Group, axis, a)));
    }
    for axis in 0..4 {
        for other in axis + 1..5 {
            v.push(Opt::new(OptOps::Swap, axis, other as i64));
        }
    }
    for axis in 0..4 {
        v.push(Opt::new(OptOps::PadTo, axis, 32));
    }
    v
}

/// Lanes of `UPCAST` × `UNROLL` of `k` (its register tile).
pub fn upcast_lanes(k: &OptKernel) -> i64 {
    k.ranges_of(&[AxisType::Upcast, AxisType::Unroll])
        .iter()
        .filter_map(|r| range_size(r))
        .product()
}

/// The kernels one action away from `k` that the target accepts and that
/// stay within [`MAX_UPCAST`] lanes, or add none to `k`'s (the
/// heuristics' register tile may already be larger; its loop order and
/// threads are still worth trying).
pub fn neighbours(k: &OptKernel, actions: &[Opt]) -> Vec<OptKernel> {
    let lanes = upcast_lanes(k);
    actions
        .iter()
        .filter_map(|opt| {
            let mut next = k.clone();
            apply_opt(&mut next, opt).ok()?;
            next.applied.push(*opt);
            let more = upcast_lanes(&next);
            (more <= MAX_UPCAST || more <= lanes).then_some(next)
        })
        .collect()
}
