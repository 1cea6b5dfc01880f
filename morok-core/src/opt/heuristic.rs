//! Hand-coded optimizations (`OptMode::Heuristics`, the default), in the
//! seed's order. Each step tries opts and keeps those the target accepts
//! (a refused opt is skipped, never an error):
//!
//! 1. tensor cores (refused without them);
//! 2. grouped reductions for small outputs (GPUs: refused without locals);
//! 3. upcast of output axes that some buffer does not index (its value is
//!    reused across the lanes: the register tile of a matmul), by 4,
//!    while the output has ≥ 1024 elements and the tile has < 32 lanes;
//!    the axis indexed by the fewest buffers with the smallest strides
//!    goes first;
//! 4. the reduction strategy (`reduce_strategy`: partial accumulators on
//!    contiguous reduce axes, upcast output lanes for column reductions),
//!    else unroll of the last reduce axis (fully when ≤ 32, else by 4)
//!    when the tile is small or nothing is unrolled yet;
//! 5. with nothing upcast and no reduction strategy, upcast 4 of the last
//!    output axis;
//! 6. locals (GPUs).
//!
//! Threads need no opt on the CPU: the host splits the outermost output
//! loop across its cores (see `Launch::parallel`).

use super::kernel::{range_size, uses_range, OptKernel};
use super::{apply_opt, Opt, OptOps};
use crate::rewrite::graph_rewrite;
use crate::uop::{AxisType, Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Tries `opt`; on success records it and returns true.
pub(super) fn try_opt(k: &mut OptKernel, opt: Opt) -> bool {
    let ok = apply_opt(k, &opt).is_ok();
    if ok {
        k.applied.push(opt);
    }
    ok
}

/// The index expressions of every global buffer access of the kernel.
pub(super) fn buffer_indices(ast: &Arc<UOp>) -> Vec<Arc<UOp>> {
    ast.toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Index && n.s(0).op() == Op::DefineGlobal)
        .map(|n| n.s(1).clone())
        .collect()
}

/// `idx[r := 1] - idx[r := 0]` with every other range at 0, folded by the
/// symbolic rules; `None` when it does not fold to a constant (loaded
/// data in the index).
pub(super) fn stride(idx: &Arc<UOp>, r: &Arc<UOp>, ranges: &[Arc<UOp>]) -> Option<i64> {
    let at = |v: i64| -> Option<i64> {
        let map: HashMap<u64, Arc<UOp>> = ranges
            .iter()
            .map(|x| (x.id(), UOp::index(if Arc::ptr_eq(x, r) { v } else { 0 })))
            .collect();
        let folded =
            graph_rewrite(&crate::symbolic::symbolic(), &idx.substitute(&map), &mut ()).ok()?;
        folded.const_value().and_then(|c| c.as_i64())
    };
    Some(at(1)? - at(0)?)
}

/// Number of output elements (product of the constant output ranges).
fn output_size(k: &OptKernel) -> i64 {
    k.output_ranges()
        .iter()
        .filter_map(|r| range_size(r))
        .product()
}

/// Applies the heuristics above to `k`.
pub fn hand_coded_optimizations(k: &mut OptKernel) {
    // 1. tensor cores (refused on targets without them)
    let tc = Opt {
        op: OptOps::Tc,
        axis: Some(0),
        arg: super::OptArg::Tc(-1, 0, 1),
    };
    if try_opt(k, tc) {
        return;
    }
    // 2. grouping for small outputs
    if output_size(k) <= 2048 {
        for axis in 0..3 {
            if try_opt(k, Opt::new(OptOps::GroupTop, axis, 16)) {
                return;
            }
        }
    }
    // 3. upcast output axes some buffer does not index
    upcast_reused_axes(k);
    // 4. the reduction strategy, else unroll the last reduce axis
    let strategy = super::reduce_strategy::choose_reduce_strategy(k);
    let upcast_product: i64 = k
        .ranges_of(&[AxisType::Upcast])
        .iter()
        .filter_map(|r| range_size(r))
        .product();
    let unrolled = !k.ranges_of(&[AxisType::Unroll]).is_empty();
    let reduces = k.ranges_of(&[AxisType::Reduce]);
    if !strategy && (upcast_product <= 4 || !unrolled) && upcast_product < 64 {
        if let Some(last) = reduces.last() {
            let axis = reduces.len() - 1;
            let full = range_size(last).is_some_and(|s| s <= 32);
            let amt = if full { 0 } else { 4 };
            try_opt(k, Opt::new(OptOps::Unroll, axis, amt));
        }
    }
    // 5. plain upcast of the last output axis
    if !strategy && k.ranges_of(&[AxisType::Upcast]).is_empty() {
        let ranges = k.ranges();
        if let Some(pos) = ranges
            .iter()
            .rposition(|r| r.axis_type() == Some(AxisType::Loop))
        {
            if range_size(&ranges[pos]).is_some_and(|s| s % 4 == 0) {
                try_opt(k, Opt::new(OptOps::Upcast, pos, 4));
            }
        }
    }
    // 6. locals (refused without them)
    if !k.limits.has_local {
        return;
    }
    for axis in 0..3 {
        for amt in [16, 8, 4] {
            if try_opt(k, Opt::new(OptOps::Local, axis, amt)) {
                break;
            }
        }
    }
}

/// Step 3: while the output has ≥ 1024 elements and the upcast product is
/// below 32, upcast by 4 the best axis (lowest (buffers using it, sum of
/// its strides)) among the loop axes for which some buffer does not use
/// the axis but uses every axis upcast so far.
fn upcast_reused_axes(k: &mut OptKernel) {
    loop {
        let upcast = k.ranges_of(&[AxisType::Upcast]);
        let product: i64 = upcast.iter().filter_map(|r| range_size(r)).product();
        if output_size(k) < 1024 || product >= 32 {
            return;
        }
        let ranges = k.ranges();
        let indices = buffer_indices(&k.ast);
        let mut best: Option<((usize, i64), usize)> = None;
        for (pos, r) in ranges.iter().enumerate() {
            if r.axis_type() != Some(AxisType::Loop) || range_size(r).is_none_or(|s| s % 4 != 0) {
                continue;
            }
            let reused = indices
                .iter()
                .any(|idx| !uses_range(idx, r) && upcast.iter().all(|u| uses_range(idx, u)));
            if !reused {
                continue;
            }
            let users: Vec<&Arc<UOp>> = indices.iter().filter(|idx| uses_range(idx, r)).collect();
            let strides: i64 = users
                .iter()
                .map(|idx| stride(idx, r, &ranges).map_or(i64::MAX / 64, |s| s.abs()))
                .sum();
            let score = (users.len(), strides);
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, pos));
            }
        }
        let Some((_, pos)) = best else {
            return;
        };
        if !try_opt(k, Opt::new(OptOps::Upcast, pos, 4)) {
            return;
        }
    }
}
