//! The heuristics for GPU targets (`Target::gpu`), in place of the CPU's
//! register tiles, vector partials and `THREAD` axis:
//!
//! 0. `TC` where the target has tensor cores and the kernel is a matmul
//!    they take (`f16`/`bf16` operands, `f32` sums; see
//!    `super::tensor_core`): a warp computes 16×8 outputs per
//!    instruction; the steps below then run on what is left (no
//!    grouping);
//! 1. a reduce kernel with few outputs (at most [`GROUP_OUTPUTS`]) would
//!    leave most of the GPU idle with a thread per output: its first
//!    reduce axis is split over the threads of a block (`GROUPTOP`: the
//!    largest of 256 … 16 threads that divides it and leaves each thread
//!    at least 4 elements, else, with at most [`FEW_OUTPUTS`] outputs,
//!    the axis's largest divisor up to 256, the whole axis included),
//!    which reduce through
//!    shared memory (`crate::lower::group_reduce`); such a kernel is not
//!    upcast;
//! 2. a reduce kernel upcasts output axes some buffer does not index by 4
//!    (the CPU's step 3 without vectors: a matmul thread computes a 4×4
//!    tile of outputs, each operand load reused four times);
//! 3. the last reduce axis is unrolled (fully when short) within the
//!    code-size cap, as on the CPU;
//! 4. `LOCAL`: the output axes, innermost first, give their factors to the
//!    threads of a block (the largest power of two dividing the axis and
//!    the threads still missing) until a block has [`BLOCK_THREADS`]
//!    threads;
//!    lowering maps what stays of those axes to the grid
//!    (`crate::lower::gpu_dims`).

use super::actions::try_opt;
use super::kernel::OptKernel;
use super::{Opt, OptArg, OptOps};
use crate::kernel::{axis_id, range_size};
use crate::uop::AxisType;

/// Threads per block the heuristics aim for: enough warps to hide memory
/// latency, few enough that small kernels still fill many blocks.
pub const BLOCK_THREADS: i64 = 256;

/// Kernels with at most this many outputs reduce through shared memory.
pub const GROUP_OUTPUTS: i64 = 2048;

/// Kernels with at most this many outputs group a short or odd reduce
/// axis too (a thread per output would leave most of the GPU idle).
pub const FEW_OUTPUTS: i64 = 256;

/// Applies the GPU heuristics above to `k`.
pub fn gpu_optimizations(k: &mut OptKernel) {
    let tc = Opt {
        op: OptOps::Tc,
        axis: Some(0),
        arg: OptArg::Tc(-1, 1, 1),
    };
    let tensor_cores = try_opt(k, tc);
    let first = k
        .ranges_of(&[AxisType::Reduce])
        .first()
        .and_then(|r| range_size(r));
    let grouped = !tensor_cores
        && first.is_some_and(|size| {
            let wide = [256, 128, 64, 32, 16]
                .into_iter()
                .filter(|amt| size % amt == 0 && size / amt >= 4);
            let outputs = super::heuristic::output_size(k);
            let divisors = (2..=size.min(256))
                .rev()
                .filter(|amt| outputs <= FEW_OUTPUTS && size % amt == 0);
            outputs <= GROUP_OUTPUTS
                && wide
                    .chain(divisors)
                    .any(|amt| try_opt(k, Opt::new(OptOps::GroupTop, 0, amt)))
        });
    let reduces = k.ranges_of(&[AxisType::Reduce]);
    if !reduces.is_empty() && !grouped {
        super::heuristic::upcast_reused_axes(k);
    }
    let upcast: i64 = k
        .ranges_of(&[AxisType::Upcast])
        .iter()
        .filter_map(|r| range_size(r))
        .product();
    if let Some(last) = reduces.last() {
        if let Some(amt) = super::compile_cost::reduce_unroll_amount(last, upcast) {
            try_opt(k, Opt::new(OptOps::Unroll, reduces.len() - 1, amt));
        }
    }
    block_threads(k);
}

/// Step 4: `LOCAL` on the output axes, innermost first, while the block
/// (its group and warp threads included) has fewer than [`BLOCK_THREADS`] threads.
fn block_threads(k: &mut OptKernel) {
    let mut threads: i64 = k
        .ranges_of(&[AxisType::GroupReduce, AxisType::Warp])
        .iter()
        .filter_map(|r| range_size(r))
        .product();
    let mut axes: Vec<usize> = k
        .ranges_of(&[AxisType::Loop, AxisType::Global])
        .iter()
        .map(|r| axis_id(r))
        .collect();
    axes.reverse();
    for id in axes {
        let ranges = k.ranges();
        let Some(pos) = ranges.iter().position(|r| {
            axis_id(r) == id && matches!(r.axis_type(), Some(AxisType::Loop | AxisType::Global))
        }) else {
            continue;
        };
        let Some(size) = range_size(&ranges[pos]) else {
            continue;
        };
        let mut amt = BLOCK_THREADS / threads;
        while amt > 1 && size % amt != 0 {
            amt /= 2;
        }
        if amt > 1 && try_opt(k, Opt::new(OptOps::Local, pos, amt)) {
            threads *= amt;
        }
        if threads >= BLOCK_THREADS {
            return;
        }
    }
}
