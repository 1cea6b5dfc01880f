//! Opt actions (seed Stage 7): what each one does to a kernel's ranges
//! and when it is refused.
//!
//! An [`Opt`]'s `axis` indexes [`OptKernel::ranges`], except `UNROLL`
//! (the reduce axes), `GROUP`/`GROUPTOP` and `PARTIALS` (the reduce
//! axes) and `TC`.
//! `arg = 0` means the whole axis. A refused opt leaves the kernel as it
//! was and returns a message naming the opt and the reason.

use super::kernel::OptKernel;
use super::opts::{amount, check, pick, reduces_over_nest, Opt, OptArg, OptOps};
use super::partials::apply_partials;
use crate::kernel::{outer_ranges_of_reduce, range_size, reorderable, replace_range, uses_range};
use crate::uop::{Arg, AxisType, Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Why the reduces over `rng` cannot become reductions through shared
/// memory (`crate::lower::group_reduce`), if they cannot: a reduce whose
/// order must stay (halves), or one that runs inside another reduce's
/// loop (its barrier would be in a loop).
fn grouped_reduce_blocked(k: &OptKernel, rng: &Arc<UOp>) -> Option<&'static str> {
    for n in k.ast.toposort() {
        if n.op() != Op::Reduce || !n.src()[1..].iter().any(|r| Arc::ptr_eq(r, rng)) {
            continue;
        }
        let Arg::Reduce(op) = *n.arg() else {
            continue;
        };
        if !reorderable(op, n.dtype()) {
            return Some("GROUP of a reduce whose order must not change");
        }
        let inside_a_loop = outer_ranges_of_reduce(&n).iter().any(|r| {
            !matches!(
                r.axis_type(),
                Some(AxisType::Loop | AxisType::Global | AxisType::Local | AxisType::GroupReduce)
            )
        });
        if inside_a_loop {
            return Some("GROUP of a reduce inside another reduce's loop");
        }
    }
    None
}

/// Applies one opt to `k` (checking its validity rules first), or says
/// why it is refused; `k` is unchanged on refusal.
pub fn apply_opt(k: &mut OptKernel, opt: &Opt) -> Result<(), String> {
    let target = k.target;
    match opt.op {
        OptOps::Tc => super::tensor_core::apply_tc(k, opt)?,
        OptOps::Upcast => {
            let rng = pick(&k.ranges(), opt.axis, "")?;
            check(
                matches!(
                    rng.axis_type(),
                    Some(AxisType::Global | AxisType::Local | AxisType::Loop)
                ),
                "UPCAST needs a GLOBAL, LOCAL or LOOP axis",
            )?;
            let amt = amount(opt, &rng)?;
            check(amt <= target.max_upcast, "UPCAST amount too large")?;
            check(
                k.ranges_of(&[AxisType::GroupReduce]).is_empty(),
                "UPCAST with a grouped reduce",
            )?;
            k.shift_to(&rng, amt, AxisType::Upcast, false)?;
        }
        OptOps::Unroll => {
            let list = k.ranges_of(&[AxisType::Reduce, AxisType::GroupReduce]);
            let rng = pick(&list, opt.axis, "reduce")?;
            let amt = amount(opt, &rng)?;
            check(amt <= 32, "UNROLL amount above 32")?;
            check(
                !reduces_over_nest(&k.ast, &rng),
                "UNROLL of a reduce whose value holds another reduce over the axis",
            )?;
            k.shift_to(&rng, amt, AxisType::Unroll, false)?;
        }
        OptOps::Local => {
            let Some(gpu) = target.gpu else {
                return Err("the target has no local memory".into());
            };
            check(!k.dont_use_locals, "NOLOCALS was applied")?;
            let rng = pick(&k.ranges(), opt.axis, "")?;
            check(
                matches!(rng.axis_type(), Some(AxisType::Global | AxisType::Loop)),
                "LOCAL needs a GLOBAL or LOOP axis",
            )?;
            let amt = amount(opt, &rng)?;
            let block: i64 = k
                .ranges_of(&[AxisType::Local, AxisType::GroupReduce, AxisType::Warp])
                .iter()
                .filter_map(|r| range_size(r))
                .product();
            check(
                amt.saturating_mul(block)
                    <= i64::try_from(gpu.threads_per_block).unwrap_or(i64::MAX),
                "LOCAL exceeds the threads of a block",
            )?;
            k.shift_to(&rng, amt, AxisType::Local, false)?;
        }
        OptOps::Group | OptOps::GroupTop => {
            let Some(gpu) = target.gpu else {
                return Err("the target has no local memory".into());
            };
            check(
                !k.applied.iter().any(|o| o.op == OptOps::Tc),
                "GROUP after TC",
            )?;
            let rng = pick(&k.ranges_of(&[AxisType::Reduce]), opt.axis, "reduce")?;
            if let Some(why) = grouped_reduce_blocked(k, &rng) {
                return Err(why.into());
            }
            check(
                k.ranges_of(&[AxisType::Upcast]).is_empty(),
                "GROUP with upcast lanes",
            )?;
            let amt = amount(opt, &rng)?;
            let block: i64 = k
                .ranges_of(&[AxisType::Local, AxisType::GroupReduce, AxisType::Warp])
                .iter()
                .filter_map(|r| range_size(r))
                .product();
            check(
                amt.saturating_mul(block) <= gpu.threads_per_block as i64,
                "GROUP exceeds the threads of a block",
            )?;
            let reduces = k
                .ast
                .toposort()
                .iter()
                .filter(|n| {
                    n.op() == Op::Reduce && n.src()[1..].iter().any(|r| Arc::ptr_eq(r, &rng))
                })
                .count() as i64;
            check(
                amt.saturating_mul(block).saturating_mul(8 * reduces) <= gpu.shared_bytes as i64,
                "GROUP exceeds the shared memory",
            )?;
            k.shift_to(&rng, amt, AxisType::GroupReduce, opt.op == OptOps::GroupTop)?;
        }
        OptOps::Thread => {
            check(target.threads > 1, "the target has no threads")?;
            check(
                k.ranges_of(&[AxisType::Thread]).is_empty(),
                "only one THREAD axis",
            )?;
            let rng = pick(&k.ranges(), opt.axis, "")?;
            check(
                rng.axis_type() == Some(AxisType::Loop),
                "THREAD needs a LOOP axis",
            )?;
            let amt = amount(opt, &rng)?;
            check(
                amt as usize <= target.threads,
                "THREAD amount above the thread count",
            )?;
            k.shift_to(&rng, amt, AxisType::Thread, true)?;
        }
        OptOps::NoLocals => {
            check(
                k.ranges_of(&[AxisType::Local, AxisType::Warp, AxisType::GroupReduce])
                    .is_empty(),
                "NOLOCALS with local axes present",
            )?;
            k.dont_use_locals = true;
        }
        OptOps::PadTo => pad_to(k, opt)?,
        OptOps::Partials => apply_partials(k, opt)?,
        OptOps::Swap => {
            let list = k.ranges();
            let a = pick(&list, opt.axis, "")?;
            let OptArg::Int(other) = opt.arg else {
                return Err("SWAP needs the other axis".into());
            };
            let b = pick(&list, usize::try_from(other).ok(), "")?;
            check(!Arc::ptr_eq(&a, &b), "SWAP of an axis with itself")?;
            let out = |r: &UOp| matches!(r.axis_type(), Some(AxisType::Global | AxisType::Loop));
            check(out(&a) && out(&b), "SWAP needs two GLOBAL or LOOP axes")?;
            check(
                a.axis_type() == b.axis_type(),
                "SWAP of axes of different types",
            )?;
            k.swap_ranges(&a, &b);
        }
    }
    Ok(())
}

/// True if every store of `ast` writes a global buffer at an index that
/// uses `rng`: then an iteration of `rng` past its size whose stores are
/// gated off has no effect, whatever its loads read.
fn every_store_indexes(ast: &Arc<UOp>, rng: &Arc<UOp>) -> bool {
    ast.toposort()
        .iter()
        .filter(|n| n.op() == Op::Store)
        .all(|st| {
            st.s(0).op() == Op::Index
                && st.s(0).s(0).op() == Op::DefineGlobal
                && uses_range(st.s(0).s(1), rng)
        })
}

/// `PADTO`: the range grows to the next multiple of the amount. On an
/// output axis that every store indexes (see `every_store_indexes`) the
/// stores are gated by `range < old size` (skipped past it) and the loads
/// read at `min(range, old size - 1)`: the padded iterations compute a
/// copy of the last real one, which nothing stores, and their loads stay
/// unconditional, in bounds and hoistable (a gated load inside a
/// reduction's loop is a branch or select per iteration: the LLVM
/// codegen's AVX2 matmul tile on W4a's rows padded to 1026 took 17.1 ms
/// gated and 8.6 ms clamped). On other axes every buffer access that uses
/// it is gated by
/// `range < old size` (loads read 0, stores are skipped), and every
/// `REDUCE` over it folds the identity for the extra iterations, so every
/// stored element and every reduction result is unchanged.
///
/// The padding must be smaller than the axis (the padded range less than
/// twice its size). The gated iterations still run their loop bodies, so
/// padding of the axis's own size or more would cost more than the real
/// work; and the CPU host splits a kernel's outermost loop into contiguous
/// blocks when it has no `THREAD` axis (see `opt::threads`): with padding
/// of at least half the padded range (a size-16 axis padded to 32), the
/// second of two threads would get nothing but padding. This is stricter
/// than tinygrad's rule (at most 4× the work), which targets GPUs, where a
/// gated thread of a workgroup costs little.
fn pad_to(k: &mut OptKernel, opt: &Opt) -> Result<(), String> {
    let rng = pick(&k.ranges(), opt.axis, "")?;
    check(
        !matches!(
            rng.axis_type(),
            Some(AxisType::Upcast | AxisType::Unroll | AxisType::Thread)
        ),
        "PADTO of an UPCAST, UNROLL or THREAD axis",
    )?;
    let size = range_size(&rng).ok_or("the axis size is not a constant")?;
    let OptArg::Int(amt) = opt.arg else {
        return Err("PADTO needs an amount".into());
    };
    check(amt > 1, "the amount must be above 1")?;
    check(size % amt != 0, "no padding needed")?;
    let padded = (size + amt - 1) / amt * amt;
    check(
        padded < size * 2,
        "PADTO padding as large as the axis (it would double the work)",
    )?;
    let Some(axis_type) = rng.axis_type() else {
        return Err("not a range".into());
    };
    let crate::uop::Arg::Range { axis_id, .. } = *rng.arg() else {
        return Err("not a range".into());
    };
    let new = UOp::range(&UOp::index(padded), axis_id, axis_type);
    let inside = new.bin(Op::CmpLt, &UOp::index(size));
    let clamp = matches!(
        axis_type,
        AxisType::Loop | AxisType::Global | AxisType::Local
    ) && every_store_indexes(&k.ast, &rng);
    let last = HashMap::from([(new.id(), new.bin(Op::Min, &UOp::index(size - 1)))]);
    let global = |n: &UOp| n.op() == Op::Index && n.s(0).op() == Op::DefineGlobal;
    let gate_index = |n: Arc<UOp>| -> Arc<UOp> {
        match n.op() {
            Op::Load if clamp && global(n.s(0)) && uses_range(n.s(0).s(1), &new) => {
                let index = n.s(0);
                let moved = index
                    .s(0)
                    .index_into(&index.s(1).substitute(&last), index.src().get(2));
                let mut src: crate::uop::Srcs = n.src().iter().cloned().collect();
                src[0] = moved;
                n.with_sources(src)
            }
            Op::Store if clamp && global(n.s(0)) && uses_range(n.s(0).s(1), &new) => {
                let index = n.s(0);
                let gate = match index.src().get(2) {
                    Some(g) => g.bin(Op::And, &inside),
                    None => inside.clone(),
                };
                let mut src: crate::uop::Srcs = n.src().iter().cloned().collect();
                src[0] = index.s(0).index_into(index.s(1), Some(&gate));
                n.with_sources(src)
            }
            Op::Index if !clamp && n.s(0).op() == Op::DefineGlobal && uses_range(n.s(1), &new) => {
                let gate = match n.src().get(2) {
                    Some(g) => g.bin(Op::And, &inside),
                    None => inside.clone(),
                };
                n.s(0).index_into(n.s(1), Some(&gate))
            }
            Op::Reduce if n.src()[1..].iter().any(|r| Arc::ptr_eq(r, &new)) => {
                let crate::uop::Arg::Reduce(op) = *n.arg() else {
                    return n;
                };
                let dt = n.dtype();
                let identity = UOp::const_(dt, op.identity(dt.scalar_type()));
                let mut src: crate::uop::Srcs = n.src().iter().cloned().collect();
                src[0] = inside.where_(n.s(0), &identity);
                n.with_sources(src)
            }
            _ => n,
        }
    };
    k.ast = replace_range(&k.ast, &rng, &new, std::slice::from_ref(&new), gate_index);
    Ok(())
}

/// Tries `opt`; on success records it and returns true.
pub fn try_opt(k: &mut OptKernel, opt: Opt) -> bool {
    let ok = apply_opt(k, &opt).is_ok();
    if ok {
        k.applied.push(opt);
    }
    ok
}
