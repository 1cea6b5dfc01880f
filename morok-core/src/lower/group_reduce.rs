//! Grouped reductions through shared memory (the optimizer's `GROUP` and
//! `GROUPTOP`), part of mapping a kernel onto a GPU launch
//! ([`super::gpu_dims`]).
//!
//! `GROUP` splits a reduce axis and makes one part a `GROUP_REDUCE`
//! range: its values become threads of the block, which each reduce
//! their share of the axis, then combine the shares through a buffer in
//! the block's shared memory. Each `REDUCE(x, g..., r...)` whose ranges
//! include group ranges `g` becomes
//!
//! ```text
//! part  = REDUCE(x, r...)                          -- each thread's share
//! local = DEFINE_LOCAL(n) : ptr<T, local>          -- one slot per thread of the block
//! bar   = BARRIER(STORE(INDEX(local, tid), part))  -- every share written
//! out   = REDUCE(LOAD(INDEX(AFTER(local, bar), tid[g := g'])), g'...)
//! ```
//!
//! where `tid` is the thread's linear number in the block (the group
//! ranges innermost, then the block's `LOCAL` ranges) and `g'` are fresh
//! reduce ranges over the group: every thread of a group reads the
//! shares of its group in order and computes the same total. Stores into
//! global buffers are to be gated by `g < 1` (one thread of each group
//! writes): the rewrite returns that gate, and `gpu_dims` adds it to the
//! gate of its padded threads.
//! The group ranges stay free in the kernel; `gpu_dims` maps them to
//! thread indices with the `LOCAL` ranges.
//!
//! Where a group is at most a warp (one group range of a power of two up
//! to 32 threads, innermost in a block of whole warps), its threads
//! exchange their shares in registers instead: `part` combined with
//! `SHUFFLE_XOR(part, o)` for `o = size/2, …, 1` (a butterfly; every
//! thread of the group ends with the total), no shared memory and no
//! barrier.
//!
//! Correct because the barrier orders every thread's share before any
//! read, and the reduction of the shares in group order is the reduction
//! of the axis reassociated, which the rewrite only does where the order
//! may change (`crate::kernel::reorderable`).
//!
//! The kernel keeps sequential reduces (the group ranges are ordinary
//! reduce loops, still correct) where one barrier per thread cannot be
//! guaranteed: a store whose ranges are not all mapped to the launch (a
//! loop around the barrier), upcast lanes, a grouped reduce inside the
//! loop of another reduce (its value varies with that loop's range), or
//! a `LOCAL` range that is not a thread index.

use super::reduce::after;
use super::LowerError;
use crate::dtype::{AddrSpace, DType};
use crate::kernel::{next_axis_id, outer_ranges_of_reduce, reorderable};
use crate::rewrite::{graph_rewrite, PatternMatcher};
use crate::uop::{Arg, AxisType, Op, ReduceOp, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// State of the rewrite: the block's ranges and the next free numbers.
struct Ctx {
    /// The ranges that number the threads of a block, innermost first
    /// (group ranges, then `LOCAL` ranges), and their sizes.
    block: Vec<(Arc<UOp>, i64)>,
    next_axis: usize,
    next_local: i64,
    /// The threads of a group when they reduce by exchanging registers
    /// within a warp (see [`warp_group`]), instead of shared memory.
    warp_group: Option<i64>,
}

/// Threads of a warp (the lanes `SHUFFLE_XOR` exchanges between).
const WARP_LANES: i64 = 32;

/// The group's thread count when its grouped reduces can go through warp
/// shuffles: one group range, of a power of two up to [`WARP_LANES`]
/// threads, innermost in a block of whole warps (so a group is aligned,
/// consecutive lanes of one warp, and every lane of every warp runs the
/// exchange).
fn warp_group(groups: &[Arc<UOp>], locals: &[Arc<UOp>]) -> Option<i64> {
    let [group] = groups else {
        return None;
    };
    let size = group.range_size()?;
    let block = locals
        .iter()
        .try_fold(size, |t, r| r.range_size().map(|s| t * s))?;
    (size > 1 && size <= WARP_LANES && size & (size - 1) == 0 && block % WARP_LANES == 0)
        .then_some(size)
}

/// `x` combined with its value in the lanes whose number differs in one
/// bit below `size`, bit by bit from the highest (a butterfly): every
/// lane of each aligned group of `size` lanes ends with the `op`
/// reduction of the group's values.
fn butterfly(x: &Arc<UOp>, op: ReduceOp, size: i64) -> Arc<UOp> {
    let mut v = x.clone();
    let mut offset = size / 2;
    while offset >= 1 {
        let other = UOp::new(
            Op::ShuffleXor,
            v.dtype(),
            smallvec::smallvec![v.clone(), UOp::index(offset)],
            Arg::None,
        );
        v = v.bin(op.alu(), &other);
        offset /= 2;
    }
    v
}

impl Ctx {
    /// `Σ rangeᵢ · strideᵢ` over the block's ranges, each range replaced
    /// by `map`'s value where it has one.
    fn thread_number(&self, map: &HashMap<u64, Arc<UOp>>) -> Arc<UOp> {
        let mut stride = 1;
        let mut sum: Option<Arc<UOp>> = None;
        for (r, size) in &self.block {
            let v = map.get(&r.id()).unwrap_or(r);
            let term = if stride == 1 {
                v.clone()
            } else {
                v.mul(&UOp::index(stride))
            };
            sum = Some(match sum {
                Some(s) => s.add(&term),
                None => term,
            });
            stride *= size;
        }
        sum.unwrap_or_else(|| UOp::index(0))
    }

    fn threads(&self) -> i64 {
        self.block.iter().map(|(_, s)| s).product()
    }
}

/// The rewrite of one grouped `REDUCE` (see the module docs).
fn share_reduce(n: &Arc<UOp>, ctx: &mut Ctx) -> Option<Arc<UOp>> {
    let Arg::Reduce(op) = *n.arg() else {
        return None;
    };
    let is_group = |r: &Arc<UOp>| r.axis_type() == Some(AxisType::GroupReduce);
    let (groups, rest): (Vec<Arc<UOp>>, Vec<Arc<UOp>>) =
        n.src()[1..].iter().cloned().partition(is_group);
    if groups.is_empty() {
        return None;
    }
    let part = if rest.is_empty() {
        n.s(0).clone()
    } else {
        n.s(0).reduce(op, &rest)
    };
    if let Some(size) = ctx.warp_group {
        return Some(butterfly(&part, op, size));
    }
    let local = UOp::new(
        Op::DefineLocal,
        n.dtype().ptr(AddrSpace::Local),
        smallvec::smallvec![UOp::index(ctx.threads())],
        Arg::Int(ctx.next_local),
    );
    ctx.next_local += 1;
    let written = local
        .index_into(&ctx.thread_number(&HashMap::new()), None)
        .store(&part);
    let barrier = UOp::new(
        Op::Barrier,
        DType::VOID,
        smallvec::smallvec![written],
        Arg::None,
    );
    let mut fresh = HashMap::new();
    let mut loops = Vec::new();
    for g in &groups {
        let r = UOp::range(g.s(0), ctx.next_axis, AxisType::Reduce);
        ctx.next_axis += 1;
        fresh.insert(g.id(), r.clone());
        loops.push(r);
    }
    let share = after(&local, &[barrier])
        .index_into(&ctx.thread_number(&fresh), None)
        .load();
    Some(share.reduce(op, &loops))
}

/// True when every grouped reduce of `ast` can become a shared-memory
/// reduction (the conditions of the module docs); `mapped` are the ranges
/// `gpu_dims` turns into block and thread indices.
fn can_share(ast: &Arc<UOp>, groups: &[Arc<UOp>], mapped: &[Arc<UOp>]) -> bool {
    let nodes = ast.toposort();
    let is_mapped = |r: &Arc<UOp>| mapped.iter().any(|m| Arc::ptr_eq(m, r));
    let stores_mapped = ast.src().iter().all(|root| match root.op() {
        Op::End => root.src()[1..].iter().all(is_mapped),
        Op::Store => true,
        _ => false,
    });
    let grouped = |n: &Arc<UOp>| {
        n.op() == Op::Reduce
            && n.src()[1..]
                .iter()
                .any(|r| groups.iter().any(|g| Arc::ptr_eq(g, r)))
    };
    stores_mapped
        && groups
            .iter()
            .all(|g| g.range_size().is_some_and(|s| s >= 1))
        && nodes.iter().all(|n| match n.axis_type() {
            Some(AxisType::Upcast) => false,
            Some(AxisType::Local) => is_mapped(n),
            _ => true,
        })
        && nodes.iter().filter(|n| grouped(n)).all(|n| {
            let Arg::Reduce(op) = *n.arg() else {
                return false;
            };
            reorderable(op, n.dtype())
        })
        && nodes.iter().filter(|n| grouped(n)).all(|n| {
            outer_ranges_of_reduce(n)
                .iter()
                .all(|r| is_mapped(r) || groups.iter().any(|g| Arc::ptr_eq(g, r)))
        })
}

/// A kernel with its grouped reduces through shared memory.
pub(super) struct Shared {
    /// The rewritten kernel.
    pub ast: Arc<UOp>,
    /// Its group ranges, innermost first: they number the threads of the
    /// block below the `LOCAL` ranges (none where the kernel keeps
    /// sequential reduces).
    pub groups: Vec<Arc<UOp>>,
    /// The gate of the threads that store (the first of each group).
    pub first: Option<Arc<UOp>>,
}

/// Rewrites the grouped reduces of `ast` through shared memory (see the
/// module docs). `locals` are the block's `LOCAL` ranges, innermost
/// first; `mapped` every range `gpu_dims` maps to the launch.
pub(super) fn share_group_reduces(
    ast: &Arc<UOp>,
    locals: &[Arc<UOp>],
    mapped: &[Arc<UOp>],
) -> Result<Shared, LowerError> {
    let mut groups: Vec<Arc<UOp>> = ast
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Range && n.axis_type() == Some(AxisType::GroupReduce))
        .collect();
    if groups.is_empty() || !can_share(ast, &groups, mapped) {
        return Ok(Shared {
            ast: ast.clone(),
            groups: Vec::new(),
            first: None,
        });
    }
    // Innermost (highest axis id, the split's inner part) first.
    groups.sort_by_key(|g| std::cmp::Reverse(crate::kernel::axis_id(g)));
    let block = groups
        .iter()
        .chain(locals)
        .map(|r| (r.clone(), r.range_size().unwrap_or(1)))
        .collect();
    let mut ctx = Ctx {
        block,
        next_axis: next_axis_id(ast),
        next_local: 0,
        warp_group: warp_group(&groups, locals),
    };
    let mut pm = PatternMatcher::new("group_reduce::share");
    pm.rule(&[Op::Reduce], share_reduce);
    let g = graph_rewrite(&pm, ast, &mut ctx)?;
    let first = groups
        .iter()
        .map(|r| r.bin(Op::CmpLt, &UOp::index(1)))
        .reduce(|a, b| a.bin(Op::And, &b));
    Ok(Shared {
        ast: g,
        groups,
        first,
    })
}

#[cfg(test)]
mod tests {
    use super::super::reduce::after;
    use crate::caps::LaunchLimits;
    use crate::dtype::DType;
    use crate::interp::{run_kernel_exact, run_launch_exact, InterpError};
    use crate::lower::gpu_dims::map_gpu_dims;
    use crate::opt::{apply_opts, Opt, OptOps};
    use crate::target::{GpuTarget, Target};
    use crate::uop::{AxisType, ConstValue, Op, ReduceOp, UOp};
    use std::sync::Arc;

    fn gpu() -> Target {
        Target {
            gpu: Some(GpuTarget {
                threads_per_block: 64,
                shared_bytes: 48 * 1024,
                warp_size: 32,
                tensor_cores: &[],
            }),
            ..Target::cpu(0, 0, 1)
        }
    }

    /// Small limits: the group and local ranges share the block's
    /// dimensions, some padded.
    const LIMITS: LaunchLimits = LaunchLimits {
        grid: [4, 3, 65535],
        block: [4, 2, 2],
    };

    /// `out[i] = op_j f(in[i·w + j])` for `i < h`, `j < w`; `softmax`
    /// makes it `Σ_j exp(x - max_j x)` (two reduces over one axis).
    fn row_reduce(h: i64, w: i64, dtype: DType, softmax: bool) -> Arc<UOp> {
        let r0 = UOp::range(&UOp::index(h), 0, AxisType::Loop);
        let r1 = UOp::range(&UOp::index(w), 1, AxisType::Reduce);
        let x = UOp::define_global(1, dtype)
            .index_into(&r0.mul(&UOp::index(w)).add(&r1), None)
            .load();
        let value = if softmax {
            let max = x.reduce(ReduceOp::Max, std::slice::from_ref(&r1));
            UOp::alu(Op::Exp2, vec![x.bin(Op::Sub, &max)])
        } else {
            x
        };
        let total = value.reduce(ReduceOp::Add, &[r1]);
        let store = UOp::define_global(0, dtype)
            .index_into(&r0, None)
            .store(&total);
        UOp::sink(vec![store.end(&[r0])])
    }

    /// Runs `ast` optimized with `opts` as a launch and sequentially
    /// (unoptimized); returns both outputs and the launched kernel.
    fn run_both(
        ast: &Arc<UOp>,
        opts: &[Opt],
        h: usize,
        w: usize,
    ) -> (Vec<f64>, Vec<f64>, Arc<UOp>) {
        run_both_within(ast, opts, h, w, &LIMITS)
    }

    /// [`run_both`] with the launch limits `limits`.
    fn run_both_within(
        ast: &Arc<UOp>,
        opts: &[Opt],
        h: usize,
        w: usize,
        limits: &LaunchLimits,
    ) -> (Vec<f64>, Vec<f64>, Arc<UOp>) {
        let input: Vec<ConstValue> = (0..h * w)
            .map(|i| ConstValue::Float(((i * 7919) % 23) as f64 / 8.0))
            .collect();
        let optimized = apply_opts(ast, opts, &gpu()).expect("opts apply");
        let (kernel, launch) = map_gpu_dims(&optimized, limits).expect("mapped");
        let mut launched = vec![vec![ConstValue::Float(-1.0); h], input.clone()];
        run_launch_exact(&kernel, &mut launched, &launch).expect("launch runs");
        let mut serial = vec![vec![ConstValue::Float(-1.0); h], input];
        run_kernel_exact(ast, &mut serial).expect("kernel runs");
        let f = |b: &[ConstValue]| b.iter().map(|c| c.as_f64()).collect();
        (f(&launched[0]), f(&serial[0]), kernel)
    }

    fn count(g: &Arc<UOp>, op: Op) -> usize {
        g.toposort().iter().filter(|n| n.op() == op).count()
    }

    #[test]
    fn a_grouped_sum_goes_through_shared_memory_and_matches() {
        for op in [OptOps::GroupTop, OptOps::Group] {
            let ast = row_reduce(6, 32, DType::F32, false);
            let opts = [Opt::new(op, 0, 8), Opt::new(OptOps::Local, 0, 2)];
            let (got, want, kernel) = run_both(&ast, &opts, 6, 32);
            assert_eq!(count(&kernel, Op::DefineLocal), 1, "{op:?}");
            assert_eq!(count(&kernel, Op::Barrier), 1);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "{op:?}: {got:?} vs {want:?}");
            }
        }
    }

    /// Groups of at most a warp in blocks of whole warps reduce by
    /// exchanging registers: a butterfly of `SHUFFLE_XOR`s, no shared
    /// memory, no barrier; the same sums (sums of eighths are exact in
    /// any order) and, for a softmax, sums within rounding.
    #[test]
    fn groups_within_a_warp_exchange_registers_instead() {
        let warps = LaunchLimits {
            grid: [4, 3, 65535],
            block: [8, 4, 4],
        };
        let cases = [
            (
                false,
                16u32,
                vec![
                    Opt::new(OptOps::GroupTop, 0, 16),
                    Opt::new(OptOps::Local, 0, 2),
                ],
            ),
            (false, 32, vec![Opt::new(OptOps::Group, 0, 32)]),
            (true, 32, vec![Opt::new(OptOps::GroupTop, 0, 32)]),
        ];
        for (softmax, group, opts) in cases {
            let ast = row_reduce(4, 64, DType::F32, softmax);
            let (got, want, kernel) = run_both_within(&ast, &opts, 4, 64, &warps);
            let reduces = if softmax { 2 } else { 1 };
            let steps = reduces * group.trailing_zeros() as usize;
            assert_eq!(count(&kernel, Op::ShuffleXor), steps, "{opts:?}");
            assert_eq!(count(&kernel, Op::Barrier), 0);
            assert_eq!(count(&kernel, Op::DefineLocal), 0);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-5 * w.abs(),
                    "{opts:?}: {got:?} vs {want:?}"
                );
            }
        }
    }

    #[test]
    fn two_grouped_reduces_over_one_axis_get_a_barrier_each() {
        let ast = row_reduce(3, 24, DType::F32, true);
        let (got, want, kernel) = run_both(&ast, &[Opt::new(OptOps::GroupTop, 0, 12)], 3, 24);
        assert_eq!(count(&kernel, Op::Barrier), 2);
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() < 1e-4 * w.abs().max(1.0),
                "{got:?} vs {want:?}"
            );
        }
    }

    /// The optimizer refuses `GROUP` of a half sum (its order is kept);
    /// a kernel grouped regardless keeps its sequential reduce.
    #[test]
    fn a_half_sum_keeps_its_order_and_stays_sequential() {
        let ast = row_reduce(2, 16, DType::F16, false);
        let refused = apply_opts(&ast, &[Opt::new(OptOps::Group, 0, 4)], &gpu());
        assert!(refused.is_err_and(|e| e.what.contains("order")));
        let mut k = crate::opt::OptKernel::new(&ast, gpu());
        let rng = k.ranges_of(&[AxisType::Reduce])[0].clone();
        k.shift_to(&rng, 4, AxisType::GroupReduce, false).unwrap();
        let (kernel, launch) = map_gpu_dims(&k.ast, &LIMITS).unwrap();
        assert_eq!(count(&kernel, Op::Barrier), 0);
        let input: Vec<ConstValue> = (0..32).map(|i| ConstValue::Float(i as f64 / 4.0)).collect();
        let mut launched = vec![vec![ConstValue::Float(-1.0); 2], input.clone()];
        run_launch_exact(&kernel, &mut launched, &launch).unwrap();
        let mut serial = vec![vec![ConstValue::Float(-1.0); 2], input];
        run_kernel_exact(&ast, &mut serial).unwrap();
        assert_eq!(launched[0], serial[0]);
    }

    /// The interpreter's check: a thread reading a slot of shared memory
    /// no thread wrote before the barrier is an error, not a value. Two
    /// threads store `shared[t]`, then read `shared[t + 2]`.
    #[test]
    fn reading_unwritten_shared_memory_is_an_error() {
        let t = UOp::new(
            Op::Special,
            DType::INDEX,
            smallvec::smallvec![UOp::index(2)],
            crate::uop::Arg::Str("lidx0".into()),
        );
        let local = UOp::new(
            Op::DefineLocal,
            DType::F32.ptr(crate::dtype::AddrSpace::Local),
            smallvec::smallvec![UOp::index(4)],
            crate::uop::Arg::Int(0),
        );
        let one = UOp::const_(DType::F32, ConstValue::Float(1.0));
        let written = local.index_into(&t, None).store(&one);
        let barrier = UOp::new(
            Op::Barrier,
            DType::VOID,
            smallvec::smallvec![written],
            crate::uop::Arg::None,
        );
        let read = |offset: i64| {
            let synced = after(&local, std::slice::from_ref(&barrier));
            let v = synced.index_into(&t.add(&UOp::index(offset)), None).load();
            UOp::sink(vec![UOp::define_global(0, DType::F32)
                .index_into(&t, None)
                .store(&v)])
        };
        let launch = crate::lower::GpuLaunch {
            grid: [1; 3],
            block: [2, 1, 1],
        };
        let mut bufs = vec![vec![ConstValue::Float(0.0); 2]];
        run_launch_exact(&read(0), &mut bufs, &launch).expect("reads what was written");
        assert_eq!(bufs[0], vec![ConstValue::Float(1.0); 2]);
        let err = run_launch_exact(&read(2), &mut bufs, &launch).unwrap_err();
        assert!(
            matches!(err, InterpError::Unwritten { local: 0, index: 2 }),
            "{err}"
        );
    }
}
