//! GPU launch dimensions: on a target that launches a grid of blocks of
//! threads ([`LaunchLimits`] in the renderer's [`Caps`](crate::caps::Caps)),
//! the kernel's parallel output ranges stop being loops and become
//! hardware indices (`SPECIAL`): `LOOP`/`GLOBAL` ranges the block index
//! (`gidx0..2` = `blockIdx.x/y/z`), `LOCAL` ranges (from the optimizer's
//! `LOCAL`) the thread index within a block (`lidx0..2` = `threadIdx`),
//! below them the group ranges of reduces through shared memory
//! (`GROUP`, [`super::group_reduce`]), and below those the `WARP` ranges
//! of a tensor-core kernel (`crate::opt` `TC`: its 4 threads of a group
//! in `x`, its 8 groups in `y`, so a thread's lane in its warp is
//! `4·gid + tig`, as the `WMMA` fragments assume).
//! Reduce, upcast and unroll ranges stay what they are: loops (or lanes)
//! inside each thread.
//!
//! The innermost range takes `x` (neighbouring threads and blocks touch
//! neighbouring elements). Where there are more than three ranges of a
//! kind, the outermost ones share one dimension (each recovered by `/`
//! and `%` of the dimension's index); where a dimension would exceed its
//! limit, all ranges of the kind become one linear index spread over the
//! three dimensions with as little padding as it takes. Threads of the
//! padding compute with their index clamped to the last real one (every
//! access stays in bounds) and their stores are gated off.
//!
//! Which ranges are parallel: those of the `END` list of every store (the
//! kernel AST contract: distinct iterations of the output ranges store
//! distinct elements), with a constant trip count; none where the kernel
//! loads a buffer it stores at another index than the store's (an
//! iteration could read what another writes).

use super::lowered::{GpuLaunch, LowerError};
use crate::caps::LaunchLimits;
use crate::dtype::DType;
use crate::kernel::{reads_what_others_write, replace_range};
use crate::rewrite::{graph_rewrite, PatternMatcher};
use crate::uop::{Arg, AxisType, Op, UOp};
use std::sync::Arc;

/// How the ranges of one kind map onto three hardware dimensions.
#[derive(Debug, PartialEq, Eq)]
enum DimPlan {
    /// `groups[d]` (innermost range first) share dimension `d`; the
    /// dimension's size is the product of their sizes.
    Direct(Vec<Vec<usize>>),
    /// All ranges form one linear index of `total` elements, spread over
    /// dimensions of these sizes (product ≥ `total`: the rest is padding).
    Linear { dims: [i64; 3], total: i64 },
}

/// Maps the ranges of `sizes` (innermost first) onto dimensions within
/// `limits`; `None` when even a linear spread does not fit.
fn plan_dims(sizes: &[i64], limits: [i64; 3]) -> Option<DimPlan> {
    let mut groups: Vec<Vec<usize>> = (0..sizes.len()).map(|i| vec![i]).collect();
    while groups.len() > 3 {
        let outer = groups.pop().unwrap_or_default();
        if let Some(last) = groups.last_mut() {
            last.extend(outer);
        }
    }
    let product = |g: &[usize]| g.iter().try_fold(1i64, |p, &i| p.checked_mul(sizes[i]));
    if groups
        .iter()
        .zip(limits)
        .all(|(g, lim)| product(g).is_some_and(|p| p <= lim))
    {
        return Some(DimPlan::Direct(groups));
    }
    let total = product(&(0..sizes.len()).collect::<Vec<_>>())?;
    let beyond_x = ceil_div(total, limits[0]);
    let z = ceil_div(beyond_x, limits[1]);
    let y = ceil_div(beyond_x, z);
    let x = ceil_div(total, y * z);
    (z <= limits[2]).then_some(DimPlan::Linear {
        dims: [x, y, z],
        total,
    })
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The hardware index `name` (`gidx0`, `lidx2`, ...) of `size` values.
fn special(name: &str, size: i64) -> Arc<UOp> {
    UOp::new(
        Op::Special,
        DType::INDEX,
        smallvec::smallvec![UOp::index(size)],
        Arg::Str(name.to_string()),
    )
}

/// The values of `ranges` (innermost first, sizes `sizes`) decomposed from
/// the linear index `linear`: innermost `linear % s0`, then
/// `linear / s0 % s1`, ..., the outermost without the `%`.
fn decompose(linear: &Arc<UOp>, sizes: &[i64]) -> Vec<Arc<UOp>> {
    let mut stride = 1;
    let mut values = Vec::new();
    for (i, &s) in sizes.iter().enumerate() {
        let mut v = if stride == 1 {
            linear.clone()
        } else {
            linear.bin(Op::Idiv, &UOp::index(stride))
        };
        if i + 1 < sizes.len() {
            v = v.bin(Op::Mod, &UOp::index(s));
        }
        values.push(v);
        stride *= s;
    }
    values
}

/// The value of each range of one kind (innermost first), the dimension
/// sizes, and the gate of the real threads where the plan pads.
type Mapped = (Vec<Arc<UOp>>, [usize; 3], Option<Arc<UOp>>);

fn map_kind(sizes: &[i64], limits: [i64; 3], prefix: &str) -> Option<Mapped> {
    let mut dims = [1usize; 3];
    match plan_dims(sizes, limits)? {
        DimPlan::Direct(groups) => {
            let mut values = vec![UOp::index(0); sizes.len()];
            for (d, group) in groups.iter().enumerate() {
                let group_sizes: Vec<i64> = group.iter().map(|&i| sizes[i]).collect();
                let size: i64 = group_sizes.iter().product();
                dims[d] = size as usize;
                let idx = special(&format!("{prefix}{d}"), size);
                for (&i, v) in group.iter().zip(decompose(&idx, &group_sizes)) {
                    values[i] = v;
                }
            }
            Some((values, dims, None))
        }
        DimPlan::Linear { dims: d, total } => {
            let [x, y, z] = [0, 1, 2].map(|i| special(&format!("{prefix}{i}"), d[i]));
            let linear = x.add(&y.add(&z.mul(&UOp::index(d[1]))).mul(&UOp::index(d[0])));
            let clamped = linear.bin(Op::Min, &UOp::index(total - 1));
            let valid = linear.bin(Op::CmpLt, &UOp::index(total));
            dims = d.map(|v| v as usize);
            Some((decompose(&clamped, sizes), dims, Some(valid)))
        }
    }
}

/// The parallel output ranges of `ast` (outermost first): the `END`
/// ranges every store shares, of the given axis types, with constant
/// sizes (see the module docs).
fn parallel_ranges(ast: &Arc<UOp>, kinds: &[AxisType]) -> Vec<Arc<UOp>> {
    let roots: Vec<&Arc<UOp>> = ast.src().iter().collect();
    let mut common: Option<Vec<Arc<UOp>>> = None;
    for root in roots {
        let list: Vec<Arc<UOp>> = match root.op() {
            Op::End => root.src()[1..].to_vec(),
            _ => Vec::new(),
        };
        common = Some(match common {
            None => list,
            Some(c) => c
                .into_iter()
                .filter(|r| list.iter().any(|l| Arc::ptr_eq(l, r)))
                .collect(),
        });
    }
    common
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.axis_type().is_some_and(|t| kinds.contains(&t)))
        .filter(|r| r.range_size().is_some_and(|s| s >= 1))
        .collect()
}

/// Replaces the parallel ranges of `ast` by hardware indices within
/// `limits` (see the module docs) and returns the kernel with its launch.
/// A kernel without parallel ranges runs as one thread.
pub fn map_gpu_dims(
    ast: &Arc<UOp>,
    limits: &LaunchLimits,
) -> Result<(Arc<UOp>, GpuLaunch), LowerError> {
    let mut launch = GpuLaunch {
        grid: [1; 3],
        block: [1; 3],
    };
    let nodes = ast.toposort();
    let warp_ranges = nodes
        .iter()
        .filter(|n| n.op() == Op::Range && n.axis_type() == Some(AxisType::Warp))
        .count();
    if reads_what_others_write(ast) {
        if warp_ranges > 0 {
            return Err(LowerError::malformed(
                "a tensor-core kernel whose threads read what others write",
                ast,
            ));
        }
        return Ok((ast.clone(), launch));
    }
    let mut grid = parallel_ranges(ast, &[AxisType::Loop, AxisType::Global, AxisType::Thread]);
    let mut locals = parallel_ranges(ast, &[AxisType::Local]);
    let mut warps = parallel_ranges(ast, &[AxisType::Warp]);
    if warps.len() != warp_ranges {
        return Err(LowerError::malformed(
            "a WARP range that not every store runs over",
            ast,
        ));
    }
    grid.reverse();
    locals.reverse();
    // The lane of a tensor core's thread is 4·gid + tig: the 4 threads of
    // a group innermost (x), the 8 groups next (y).
    warps.sort_by_key(|r| r.range_size());
    let mapped: Vec<Arc<UOp>> = grid.iter().chain(&warps).chain(&locals).cloned().collect();
    let shared = super::group_reduce::share_group_reduces(ast, &locals, &mapped)?;
    let mut g = shared.ast;
    if let Some(mut first) = shared.first {
        g = graph_rewrite(&gate_stores(), &g, &mut first)?;
    }
    let mut gates = Vec::new();
    let block: Vec<Arc<UOp>> = warps
        .into_iter()
        .chain(shared.groups)
        .chain(locals)
        .collect();
    let kinds = [(grid, limits.grid, "gidx"), (block, limits.block, "lidx")];
    for (k, (ranges, lims, prefix)) in kinds.into_iter().enumerate() {
        if ranges.is_empty() {
            continue;
        }
        let sizes: Vec<i64> = ranges.iter().filter_map(|r| r.range_size()).collect();
        let Some((values, dims, gate)) = map_kind(&sizes, lims, prefix) else {
            return Err(LowerError::malformed(
                format!("{sizes:?} threads exceed the launch limits {lims:?}"),
                ast,
            ));
        };
        if k == 0 {
            launch.grid = dims;
        } else {
            launch.block = dims;
        }
        gates.extend(gate);
        for (r, v) in ranges.iter().zip(values) {
            g = replace_range(&g, r, &v, &[], drop_empty_end);
        }
    }
    if let Some(mut valid) = gates.into_iter().reduce(|a, b| a.bin(Op::And, &b)) {
        g = graph_rewrite(&gate_stores(), &g, &mut valid)?;
    }
    Ok((g, launch))
}

/// An `END` left without ranges is its store alone.
fn drop_empty_end(n: Arc<UOp>) -> Arc<UOp> {
    if n.op() == Op::End && n.src().len() == 1 {
        n.s(0).clone()
    } else {
        n
    }
}

/// Every store into a global buffer gated by the context's `valid` too
/// (once: a gate that already holds it is left alone).
fn gate_stores() -> PatternMatcher<Arc<UOp>> {
    let mut pm = PatternMatcher::new("gpu_dims::gate_stores");
    pm.rule(&[Op::Store], |n, valid: &mut Arc<UOp>| {
        let index = n.s(0);
        if index.s(0).op() != Op::DefineGlobal {
            return None;
        }
        let gate = match index.src().get(2) {
            Some(g) if Arc::ptr_eq(g, valid) || g.src().iter().any(|s| Arc::ptr_eq(s, valid)) => {
                return None
            }
            Some(g) => g.bin(Op::And, valid),
            None => valid.clone(),
        };
        Some(index.s(0).index_into(index.s(1), Some(&gate)).store(n.s(1)))
    });
    pm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::ConstValue;

    /// `out[i·w + j] = 2·in[i·w + j]` over an `h × w` output whose inner
    /// range has axis type `inner`.
    fn doubling_kernel(h: i64, w: i64, inner: AxisType) -> Arc<UOp> {
        let r0 = UOp::range(&UOp::index(h), 0, AxisType::Loop);
        let r1 = UOp::range(&UOp::index(w), 1, inner);
        let idx = r0.mul(&UOp::index(w)).add(&r1);
        let v = UOp::define_global(1, DType::F32)
            .index_into(&idx, None)
            .load();
        let store = UOp::define_global(0, DType::F32)
            .index_into(&idx, None)
            .store(&v.add(&v));
        UOp::sink(vec![store.end(&[r0, r1])])
    }

    /// Runs the mapped kernel thread by thread (the interpreter fails on a
    /// store two threads make and on an access outside a buffer) and
    /// checks every element; returns the launch.
    fn run_mapped(ast: &Arc<UOp>, n: usize, limits: LaunchLimits) -> GpuLaunch {
        let (g, launch) = map_gpu_dims(ast, &limits).expect("mapped");
        assert!(
            g.toposort().iter().all(|n| n.op() != Op::Range),
            "no loop left"
        );
        let input: Vec<ConstValue> = (0..n).map(|i| ConstValue::Float(i as f64)).collect();
        let mut bufs = vec![vec![ConstValue::Float(-1.0); n], input];
        crate::interp::run_launch_exact(&g, &mut bufs, &launch).expect("runs");
        for (i, v) in bufs[0].iter().enumerate() {
            assert_eq!(*v, ConstValue::Float(2.0 * i as f64), "element {i}");
        }
        launch
    }

    #[test]
    fn mapped_launches_store_every_element_once_padded_or_not() {
        let wide = LaunchLimits {
            grid: LIMITS,
            block: [1024, 1024, 64],
        };
        let launch = run_mapped(&doubling_kernel(5, 7, AxisType::Loop), 35, wide);
        assert_eq!(launch.grid, [7, 5, 1]);
        let narrow = LaunchLimits {
            grid: [4, 3, 8],
            block: [2, 2, 2],
        };
        // 17 × 3 blocks over a grid of at most 4 × 3 × 8: one linear index
        // with padding (the padded blocks' stores are gated off).
        let launch = run_mapped(&doubling_kernel(17, 3, AxisType::Loop), 51, narrow);
        assert!(launch.grid.iter().product::<usize>() > 51, "{launch:?}");
        // A LOCAL axis of 7 threads in blocks of at most 2 × 2 × 2.
        let launch = run_mapped(&doubling_kernel(3, 7, AxisType::Local), 21, narrow);
        assert_eq!(launch.grid, [3, 1, 1]);
        assert_eq!(launch.block.iter().product::<usize>(), 8, "{launch:?}");
    }

    const LIMITS: [i64; 3] = [2147483647, 65535, 65535];

    #[test]
    fn up_to_three_ranges_within_the_limits_map_one_to_one() {
        assert_eq!(
            plan_dims(&[32, 7, 9], LIMITS),
            Some(DimPlan::Direct(vec![vec![0], vec![1], vec![2]]))
        );
    }

    #[test]
    fn outer_ranges_beyond_three_share_the_last_dimension() {
        assert_eq!(
            plan_dims(&[4, 3, 2, 5], LIMITS),
            Some(DimPlan::Direct(vec![vec![0], vec![1], vec![2, 3]]))
        );
    }

    #[test]
    fn a_dimension_over_its_limit_spreads_one_linear_index_with_padding() {
        let Some(DimPlan::Linear { dims, total }) = plan_dims(&[3, 70000], LIMITS) else {
            panic!("expected a linear plan");
        };
        assert_eq!(total, 210000);
        assert!(dims.iter().product::<i64>() >= total);
        assert!(dims.iter().zip(LIMITS).all(|(d, l)| *d <= l));
        let block = plan_dims(&[2000], [1024, 1024, 64]);
        assert_eq!(
            block,
            Some(DimPlan::Linear {
                dims: [1000, 2, 1],
                total: 2000
            })
        );
        assert_eq!(plan_dims(&[1 << 40, 1 << 20], [1024, 1024, 64]), None);
    }
}
