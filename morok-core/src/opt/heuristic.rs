//! Hand-coded optimizations (`OptMode::Heuristics`, the default), in the
//! seed's order. Each step tries opts and keeps those the target accepts
//! (a refused opt is skipped, never an error):
//!
//! 1. tensor cores (refused without them);
//! 2. grouped reductions for small outputs (GPUs: refused without locals);
//! 3. upcast of output axes that some buffer does not index (its value is
//!    reused across the lanes: the register tile of a matmul), by 4,
//!    while the output has ≥ 256 elements (a small matmul gets
//!    independent accumulators too) and the tile has < 32 lanes;
//!    the axis indexed by the fewest buffers with the smallest strides
//!    goes first; on a target with vectors, a kernel with a reduce whose
//!    stores are contiguous along such an axis gets a register tile sized
//!    for the vector registers instead (see [`vector_register_tile`]),
//!    its loops ordered for the L2 cache (`order_tile_loops`);
//!    a reduce kernel of ≥ 32 terms per output upcasts a narrow output
//!    axis (≤ 16) that step 3 left fully: independent accumulators, next
//!    to step 3's tile while it stays within 16 accumulators, see
//!    `upcast_narrow_output`;
//! 4. the reduction strategy (`reduce_strategy`: partial accumulators on
//!    contiguous reduce axes, upcast output lanes for column reductions),
//!    else unroll of the last reduce axis (fully when ≤ 32, else by 4)
//!    when the tile is small or nothing is unrolled yet, within the
//!    code-size cap of [`super::compile_cost`];
//! 5. with nothing upcast and no reduction strategy, upcast the last
//!    output axis by a vector's lanes when the stores step through it
//!    contiguously, else by 4;
//! 6. a `THREAD` axis for large kernels on targets with threads
//!    ([`super::threads`]);
//! 7. locals (GPUs).
//!
//! GPU targets take their own heuristics instead (`super::gpu_heuristic`;
//! `super::apply_heuristics` picks).
//!
//! Without a `THREAD` axis the CPU host still splits the outermost output
//! loop across its cores (see `Launch::parallel`).

use super::access::{buffer_indices, stride};
use super::actions::try_opt;
use super::kernel::OptKernel;
use super::{Opt, OptOps};
use crate::kernel::{axis_id, loop_nest_iterations, range_size, uses_range, vector_pieces};
use crate::uop::{AxisType, Op, UOp};
use std::sync::Arc;

/// Number of output elements (product of the constant output ranges).
pub(super) fn output_size(k: &OptKernel) -> i64 {
    // Saturating: a kernel of several stores (the border stores of a
    // padded gradient) lists the ranges of all of them, whose product can
    // exceed i64 (15 ranges of 8 and 64: it wrapped to a small output in
    // release builds and overflowed in debug builds).
    k.output_ranges()
        .iter()
        .filter_map(|r| range_size(r))
        .fold(1, i64::saturating_mul)
}

/// Applies the heuristics above to `k`.
pub fn hand_coded_optimizations(k: &mut OptKernel) {
    let iterations = loop_nest_iterations(&k.ast);
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
    // 3. upcast output axes some buffer does not index: a vector register
    // tile where the target has vectors, else by 4
    if !vector_register_tile(k) {
        upcast_reused_axes(k);
    }
    // 3b. a narrow output of a reduction gets its lanes as accumulators
    upcast_narrow_output(k);
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
            if let Some(amt) = super::compile_cost::reduce_unroll_amount(last, upcast_product) {
                try_opt(k, Opt::new(OptOps::Unroll, axis, amt));
            }
        }
    }
    // 5. plain upcast of the last output axis
    if !strategy && k.ranges_of(&[AxisType::Upcast]).is_empty() {
        let ranges = k.ranges();
        if let Some(pos) = ranges
            .iter()
            .rposition(|r| r.axis_type() == Some(AxisType::Loop))
        {
            let amt = super::compile_cost::cap_upcast(k, elementwise_upcast(k, &ranges[pos]));
            if range_size(&ranges[pos]).is_some_and(|s| s % amt == 0) {
                try_opt(k, Opt::new(OptOps::Upcast, pos, amt));
            }
        }
    }
    // 6. threads (refused without them)
    super::threads::thread_outer_axis(k, iterations);
    // 7. locals (refused without them)
    if !k.target.has_local() {
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

/// Step 3: while the output has ≥ 256 elements and the upcast product is
/// below 32, upcast by 4 (elementwise kernels: by a vector's lanes, see
/// [`elementwise_upcast`]) the best axis (lowest (buffers using it, sum of
/// its strides)) among the loop axes for which some buffer does not use
/// the axis but uses every axis upcast so far.
pub(super) fn upcast_reused_axes(k: &mut OptKernel) {
    loop {
        let upcast = k.ranges_of(&[AxisType::Upcast]);
        let product: i64 = upcast.iter().filter_map(|r| range_size(r)).product();
        if output_size(k) < 256 || product >= 32 {
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
        // An elementwise kernel (a broadcast, like softmax's and
        // layernorm's last kernels) upcasts its contiguous output axis by
        // a whole vector: 4 lanes would leave 3/4 of each register empty
        // and keep its transcendentals on libm (see
        // `crate::lower::vectorize::MIN_DECOMPOSED_BYTES`).
        let amt = if k.ranges_of(&[AxisType::Reduce]).is_empty() {
            elementwise_upcast(k, &ranges[pos])
        } else {
            4
        };
        if !try_opt(k, Opt::new(OptOps::Upcast, pos, amt)) {
            return;
        }
    }
}

/// Most lanes of [`upcast_narrow_output`].
const NARROW_OUTPUT_LANES: i64 = 16;

/// Most accumulators (vectors, or scalars where the lanes stay scalar)
/// that [`upcast_narrow_output`] lets a kernel's tile reach: half the
/// vector registers of an AVX-512 host, all but the loads' of an AVX2 one.
const NARROW_MAX_ACCUMULATORS: i64 = 16;

/// Shortest reduction (product of the reduce axes) that
/// [`upcast_narrow_output`] acts on: the out-of-order core overlaps the
/// chains of consecutive outputs when each is a few multiply-adds, not
/// when each is a hundred.
const NARROW_MIN_REDUCE: i64 = 32;

/// Step 3b: a reduce kernel whose narrow output axis got no upcast in
/// step 3 (fewer than 256 outputs, or 4 does not divide it: the second
/// matmul of a small MLP, `[B, 128] @ [128, 10]`) would run one serial
/// accumulator chain per output of that axis, each multiply-add waiting
/// on the previous one. The innermost output loop axis of at most
/// [`NARROW_OUTPUT_LANES`] (and `max_upcast`) elements that some buffer
/// does not index (its loads are shared by the lanes) is upcast fully:
/// that many independent chains per pass of the reduce loop, when the
/// reduction has at least [`NARROW_MIN_REDUCE`] elements. Next to a tile
/// step 3 already made (the MLP's rows, upcast by 4) it is upcast while
/// the tile's accumulators stay within [`NARROW_MAX_ACCUMULATORS`]: the
/// tile's lanes times the axis's vectors and scalar lanes where the
/// stores step through it contiguously (10 `f32` outputs: a vector of 8
/// and 2 scalars, see `crate::kernel::vector_pieces`), times its
/// lanes where they all stay scalars. Each output still adds its terms in
/// the same order, so results are bit-exact (no reassociation).
fn upcast_narrow_output(k: &mut OptKernel) {
    let reduce: i64 = k
        .ranges_of(&[AxisType::Reduce])
        .iter()
        .map(|r| range_size(r).unwrap_or(i64::MAX))
        .fold(1, i64::saturating_mul);
    if reduce < NARROW_MIN_REDUCE {
        return;
    }
    let tile: i64 = k
        .ranges_of(&[AxisType::Upcast])
        .iter()
        .filter_map(|r| range_size(r))
        .product();
    let ranges = k.ranges();
    let indices = buffer_indices(&k.ast);
    let store = first_store(&k.ast);
    let lanes = vector_lanes(k);
    let itemsize = store
        .as_ref()
        .map_or(4, |st| st.s(1).dtype().scalar_type().itemsize());
    let accumulators = |r: &Arc<UOp>, size: i64| {
        let contiguous = store
            .as_ref()
            .is_some_and(|st| stride(st.s(0).s(1), r, &ranges) == Some(1));
        contiguous
            .then(|| vector_pieces(size, lanes, itemsize))
            .flatten()
            .map_or(size, |pieces| pieces.iter().map(|p| p.count).sum())
    };
    let narrow = ranges.iter().rposition(|r| {
        r.axis_type() == Some(AxisType::Loop)
            && range_size(r).is_some_and(|s| {
                s > 1
                    && s <= NARROW_OUTPUT_LANES.min(k.target.max_upcast)
                    && (tile == 1 || tile * accumulators(r, s) <= NARROW_MAX_ACCUMULATORS)
            })
            && indices.iter().any(|idx| !uses_range(idx, r))
    });
    if let Some(pos) = narrow {
        try_opt(k, Opt::new(OptOps::Upcast, pos, 0));
    }
}

/// The first store of the kernel into a global buffer.
fn first_store(ast: &Arc<UOp>) -> Option<Arc<UOp>> {
    ast.toposort()
        .into_iter()
        .find(|n| n.op() == Op::Store && n.s(0).op() == Op::Index)
}

/// Vector lanes of the kernel's stored type on the target (1: none).
fn vector_lanes(k: &OptKernel) -> i64 {
    let caps = crate::caps::Caps::none_native().with_vector_bytes(k.target.vector_bytes);
    first_store(&k.ast).map_or(1, |st| {
        i64::from(caps.vector_lanes(st.s(1).dtype().scalar_type()))
    })
}

/// Step 5's amount for the output axis `r`: a vector's lanes when the
/// stores step through `r` with stride 1 (lowering then makes the lanes
/// one vector), else 4.
fn elementwise_upcast(k: &OptKernel, r: &Arc<UOp>) -> i64 {
    let lanes = vector_lanes(k);
    let contiguous =
        first_store(&k.ast).is_some_and(|st| stride(st.s(0).s(1), r, &k.ranges()) == Some(1));
    if lanes >= 4 && contiguous && range_size(r).is_some_and(|s| s % lanes == 0) {
        lanes
    } else {
        4
    }
}

/// A register tile for a reduce kernel on a target with vectors (the
/// matmul micro-kernel): upcast the output axis `j` the stores step
/// through with stride 1 (and some buffer does not index; where its size
/// is no multiple of the vector lanes, rather an output axis along which
/// a reduction's operand is contiguous and whose size is, see
/// `reduction_contiguous_along`) by `NR = 2W`
/// (or `W`), `W` the lanes of its vectors (see `vector_width`), or
/// whole where that packs the vectors fuller (see `tile_row`), then
/// the output axis `i` that a buffer of the reduction (indexed by a
/// reduce range) indexing `j` does not index (else any buffer) by `MR`,
/// the largest of 8, 7, 6, 4, 3, 2 that divides it and keeps `MR` times the
/// row's vectors as accumulators plus one row of loaded vectors and one
/// broadcast within the vector registers (32 with 64-byte vectors, 16
/// otherwise), then a third axis where one fits (see `third_tile_axis`).
/// Lowering makes each row of the tile its vectors updated by vector
/// FMAs; the last
/// reduce axis is then unrolled by 4 when 4 divides it. The `i` tile and
/// the unroll need a reduction that reads along `j` (see
/// `reduction_reads_along`); without one only `j` is upcast. Returns false
/// (nothing applied) when the kernel has no such axes.
pub fn vector_register_tile(k: &mut OptKernel) -> bool {
    let full = vector_lanes(k);
    if full < 4 || k.ranges_of(&[AxisType::Reduce]).is_empty() || output_size(k) < 1024 {
        return false;
    }
    let Some(store) = first_store(&k.ast) else {
        return false;
    };
    let ranges = k.ranges();
    let indices = buffer_indices(&k.ast);
    let loops: Vec<&Arc<UOp>> = ranges
        .iter()
        .filter(|r| r.axis_type() == Some(AxisType::Loop))
        .collect();
    let reused = |r: &Arc<UOp>, with: Option<&Arc<UOp>>| {
        indices
            .iter()
            .any(|idx| !uses_range(idx, r) && with.is_none_or(|u| uses_range(idx, u)))
    };
    let store_j = loops.iter().copied().find(|r| {
        stride(store.s(0).s(1), r, &ranges) == Some(1)
            && reused(r, None)
            && range_size(r).is_some_and(|s| s % 4 == 0)
    });
    let whole_vectors = |r: &Arc<UOp>| range_size(r).is_some_and(|s| s % full == 0);
    // The stores' axis, unless its rows fill no whole vector or the
    // reduction reads along it with a stride (a strided convolution's
    // input): then an axis the reduction's operand is contiguous along.
    let read_in_step = |r: &Arc<UOp>| !reduction_strided_along(&k.ast, r, &ranges);
    let j = match store_j {
        Some(j) if whole_vectors(j) && read_in_step(j) => j,
        partial => {
            let operand = loops.iter().copied().find(|r| {
                whole_vectors(r)
                    && reused(r, None)
                    && reduction_contiguous_along(&k.ast, r, &ranges)
            });
            match operand.or(partial) {
                Some(j) => j,
                None => return false,
            }
        }
    };
    let size_j = range_size(j).unwrap_or(0);
    let itemsize = store.s(1).dtype().scalar_type().itemsize();
    let (nr, rows) = tile_row(full, size_j, itemsize, k.target.max_upcast);
    let registers = i64::from(k.target.vector_registers);
    // The tile's rows: an axis along which the reduction's operand read
    // along `j` (a buffer indexed by a reduce range) stays the same, so
    // each loaded vector feeds one FMA per row. A buffer read outside the
    // reduction (a bias) does not count: reusing it saves nothing, and
    // taking its axis (a batch axis of `P @ V` whose `V` carries a fused
    // bias) makes every row load its own operands.
    let reduce_ranges = k.ranges_of(&[AxisType::Reduce]);
    let operand_reused = |r: &Arc<UOp>| {
        indices.iter().any(|idx| {
            reduce_ranges.iter().any(|rr| uses_range(idx, rr))
                && !uses_range(idx, r)
                && uses_range(idx, j)
        })
    };
    let i = loops
        .iter()
        .copied()
        .find(|r| !Arc::ptr_eq(r, j) && operand_reused(r))
        .or_else(|| {
            loops
                .iter()
                .copied()
                .find(|r| !Arc::ptr_eq(r, j) && reused(r, Some(j)))
        });
    let j_id = axis_id(j);
    let i_id = i.map(|r| axis_id(r));
    // The matmul's `B`: the buffers loaded along `j` but not along `i`.
    let panels: Vec<i64> = i.map_or(Vec::new(), |i| {
        k.ast
            .toposort()
            .iter()
            .filter(|n| {
                n.op() == Op::Index
                    && n.s(0).op() == Op::DefineGlobal
                    && uses_range(n.s(1), j)
                    && !uses_range(n.s(1), i)
            })
            .filter_map(|n| buffer_slot(n.s(0)))
            .collect()
    });
    let pos = |k: &OptKernel, id: usize| k.ranges().iter().position(|r| axis_id(r) == id);
    let Some(pj) = pos(k, j_id) else {
        return false;
    };
    let tile_pays = reduction_reads_along(&k.ast, j);
    if !try_opt(k, Opt::new(OptOps::Upcast, pj, nr)) {
        return false;
    }
    let (Some(i), Some(i_id), true) = (i, i_id, tile_pays) else {
        return true;
    };
    let size_i = range_size(i).unwrap_or(1);
    let (dividing, padded) = tile_rows(size_i, rows, registers);
    let mr = match (padded, pos(k, i_id)) {
        (Some(mr), Some(pi)) if try_opt(k, Opt::new(OptOps::PadTo, pi, mr)) => Some(mr),
        _ => dividing,
    };
    if let (Some(mr), Some(pi)) = (mr, pos(k, i_id)) {
        if try_opt(k, Opt::new(OptOps::Upcast, pi, mr)) {
            third_tile_axis(k, [j_id, i_id], mr * rows, registers);
        }
    }
    order_tile_loops(k, &panels, i_id);
    // unroll the reduce by 4 (fewer loop branches per FMA; refused when 4
    // does not divide it)
    let reduces = k.ranges_of(&[AxisType::Reduce]).len();
    try_opt(k, Opt::new(OptOps::Unroll, reduces - 1, 4));
    true
}

/// True if a load inside a reduction's value steps through `r` with
/// stride 1 (a convolution's weights laid out with the output channels
/// innermost). Such an `r` is the register tile's `j` where the stores'
/// contiguous axis fills no whole vector (a 7×7 or 14×14 feature map:
/// 49 or 196 outputs a row, vectors of 4 at best), or where the
/// reduction reads along that axis with a stride (a convolution of
/// stride 2: each vector of the input would be gathered): the tile's
/// accumulators are then vectors along `r` (see
/// `crate::lower::expand`), fed by one vector load of the operand per
/// reduce step, and each output is stored once per lane after its
/// reduction (ResNet-50's 7×7 layers: 16 to 55 GFLOP/s with the row's
/// vectors of 4 or scalars).
fn reduction_contiguous_along(ast: &Arc<UOp>, r: &Arc<UOp>, ranges: &[Arc<UOp>]) -> bool {
    reduction_load_strides(ast, r, ranges).contains(&Some(1))
}

/// True if a load inside a reduction's value steps through `r` with a
/// stride other than 1 (or none that is constant): its lanes along `r`
/// would be gathered (a strided convolution's input, or a downsampling
/// shortcut fused into the kernel of the layer it is added to).
fn reduction_strided_along(ast: &Arc<UOp>, r: &Arc<UOp>, ranges: &[Arc<UOp>]) -> bool {
    reduction_load_strides(ast, r, ranges)
        .iter()
        .any(|s| *s != Some(1))
}

/// The stride along `r` of each load inside a reduction's value whose
/// index uses `r` (`None` where it is not constant).
fn reduction_load_strides(ast: &Arc<UOp>, r: &Arc<UOp>, ranges: &[Arc<UOp>]) -> Vec<Option<i64>> {
    ast.toposort()
        .iter()
        .filter(|n| n.op() == Op::Reduce)
        .flat_map(|red| red.s(0).toposort())
        .filter(|n| n.op() == Op::Index && n.s(0).op() == Op::DefineGlobal && uses_range(n.s(1), r))
        .map(|n| stride(n.s(1), r, ranges))
        .collect()
}

/// Rows a register tile with `rows` vectors per row can take, out of
/// `registers` vector registers, along an output axis of `size_i`: the
/// most of 8, 7, 6, 4, 3, 2 (7: the rows of a 7×7 or 14×14 feature map)
/// whose accumulators plus one row of loaded
/// vectors and a broadcast fit and that divide `size_i`; and, where that
/// leaves fewer than [`LATENCY_ACCUMULATORS`] accumulators, the most that
/// fit and whose padding of the axis to a multiple adds at most 1/32 of
/// its rows (taken if `PADTO` to it applies). The case: 16 AVX2
/// registers and a 1024-row matmul take 6 rows of 2 vectors on 1026
/// padded rows, not 4 rows (8 accumulators, too few to hide the FMA
/// latency): `W4a` 13.6 → 10.1 ms with AVX2 code on a Zen 5 host.
fn tile_rows(size_i: i64, rows: i64, registers: i64) -> (Option<i64>, Option<i64>) {
    let fits = |mr: &i64| mr * rows + rows < registers;
    let candidates = [8, 7, 6, 4, 3, 2].into_iter().filter(fits);
    let dividing = candidates.clone().find(|mr| size_i % mr == 0);
    if dividing.is_some_and(|mr| mr * rows >= LATENCY_ACCUMULATORS) {
        return (dividing, None);
    }
    let padded = candidates
        .take_while(|mr| dividing.is_none_or(|d| *mr > d))
        .find(|mr| (size_i + mr - 1) / mr * mr - size_i <= size_i / 32);
    (dividing, padded)
}

/// Accumulator vectors a register tile needs for its FMAs to hide their
/// latency with slack: two FMA pipes of four cycles' latency keep eight
/// chains busy, and eight leave no room for a late load.
const LATENCY_ACCUMULATORS: i64 = 12;

/// True if some load inside a reduction's value indexes `j`: the
/// reduce loop then reads data that the rows of a register tile share
/// (a matmul's `B`). Where no reduction reads along `j` (a row-wise
/// normalization with an affine epilogue: layernorm's mean and variance
/// read `x[i, r]`, only the epilogue reads `gamma[j]`, `beta[j]`), tiling
/// rows shares nothing inside the reduce loops; it multiplies the
/// accumulators by the rows, and the reduce unroll leaves the innermost
/// reduce axis strided, so it gets no vector partials (`PARTIALS`).
/// Such a kernel keeps only its `j` upcast (the vector epilogue), and
/// each reduction gets its partials, as softmax's does.
fn reduction_reads_along(ast: &Arc<UOp>, j: &Arc<UOp>) -> bool {
    ast.toposort()
        .iter()
        .filter(|n| n.op() == Op::Reduce)
        .any(|red| {
            red.s(0).toposort().iter().any(|n| {
                n.op() == Op::Index && n.s(0).op() == Op::DefineGlobal && uses_range(n.s(1), j)
            })
        })
}

/// Cache blocking of a register tile's loops (a matmul `C = A·B`, `j`
/// the columns, `i` the rows): each tile reads a panel of `B` (the
/// buffers in slots `panels`, loaded along `j` but not along `i`: all
/// `K` rows of the tile's columns) and a panel of `A` (the tile's `MR`
/// rows, contiguous). With the `i` loop outside `B`'s other loop (`j`'s
/// outer part, or the panel index of a packed `B`), every `i` step
/// sweeps all of `B`, which comes from L3 or memory once `B` is larger
/// than the L2 cache (row by strided row where `B` is not packed; a
/// power-of-two row stride also maps a panel's lines onto few cache
/// sets). With `B`'s loop outside instead, one panel stays in L2 while
/// the `i` loop streams `A`'s rows past it. So when such a `B` spans
/// more than [`crate::target::Target::l2_bytes`] (1 MiB where unknown) and
/// `i`'s outer loop runs outside a loop of `B`, the two are swapped
/// (`SWAP`: the order in which outputs are computed changes, each
/// output's reduction does not).
fn order_tile_loops(k: &mut OptKernel, panels: &[i64], i_id: usize) {
    let ranges = k.ranges();
    let Some(pi) = ranges
        .iter()
        .position(|r| axis_id(r) == i_id && r.axis_type() == Some(AxisType::Loop))
    else {
        return;
    };
    let l2 = match k.target.l2_bytes {
        0 => 1 << 20,
        b => b as i64,
    };
    let bytes = |n: &Arc<UOp>| -> i64 {
        let elements: i64 = ranges
            .iter()
            .filter(|r| uses_range(n.s(1), r))
            .filter_map(|r| range_size(r))
            .product();
        elements.saturating_mul(n.s(0).dtype().scalar_type().itemsize() as i64)
    };
    let large: Vec<Arc<UOp>> = k
        .ast
        .toposort()
        .into_iter()
        .filter(|n| {
            n.op() == Op::Index
                && n.s(0).op() == Op::DefineGlobal
                && buffer_slot(n.s(0)).is_some_and(|slot| panels.contains(&slot))
                && bytes(n) > l2
        })
        .collect();
    let inner = ranges.iter().position(|r| {
        r.axis_type() == Some(AxisType::Loop)
            && large.iter().any(|n| uses_range(n.s(1), r))
            && k.runs_outside(&ranges[pi], r) == Some(true)
    });
    if let Some(pb) = inner {
        try_opt(k, Opt::new(OptOps::Swap, pi, pb as i64));
    }
}

/// The slot of a `DEFINE_GLOBAL`.
fn buffer_slot(n: &UOp) -> Option<i64> {
    match *n.arg() {
        crate::uop::Arg::Int(slot) => Some(slot),
        _ => None,
    }
}

/// The register tile's third axis (a convolution's output rows): the
/// innermost other output loop axis `h` some buffer indexing `i` does
/// not index (its loads, a convolution's weights, are reused across
/// `h`'s lanes), upcast by the largest of 4, 3, 2 that divides it while
/// the `acc · amt` accumulators plus `amt` loaded vectors stay within the
/// registers. `acc`: accumulators so far (vectors).
fn third_tile_axis(k: &mut OptKernel, [j_id, i_id]: [usize; 2], acc: i64, registers: i64) {
    let indices = buffer_indices(&k.ast);
    let ranges = k.ranges();
    let Some(i) = ranges.iter().find(|r| axis_id(r) == i_id) else {
        return;
    };
    let Some(h) = ranges.iter().rev().find(|r| {
        let id = axis_id(r);
        r.axis_type() == Some(AxisType::Loop)
            && id != i_id
            && id != j_id
            && indices
                .iter()
                .any(|idx| !uses_range(idx, r) && uses_range(idx, i))
            && indices.iter().any(|idx| uses_range(idx, r))
    }) else {
        return;
    };
    let size = range_size(h).unwrap_or(1);
    let Some(amt) = [4, 3, 2]
        .into_iter()
        .find(|a| size % a == 0 && acc * a + a < registers)
    else {
        return;
    };
    if let Some(ph) = k.ranges().iter().position(|r| axis_id(r) == axis_id(h)) {
        try_opt(k, Opt::new(OptOps::Upcast, ph, amt));
    }
}

/// Most vector registers one row of a register tile takes where it
/// covers its whole axis (see [`tile_row`]).
const WHOLE_ROW_REGISTERS: i64 = 4;

/// A register tile's row along the stored axis `j` of `size` elements
/// on a target with `full`-lane vectors: its lanes `NR` and the vector
/// registers they take. Two vectors of `vector_width` lanes (one where
/// two do not divide `size`); but where `full` does not divide `size`,
/// the whole axis when it takes at most [`WHOLE_ROW_REGISTERS`] registers
/// (`crate::kernel::vector_pieces`: full vectors, then narrower
/// ones, as lowering cuts it) and so holds more lanes per register. A
/// 56-wide image row on AVX-512 becomes 3 vectors of 16 and one of 8 (14
/// lanes a register, 4 FMAs a row) instead of 8-lane vectors (8 lanes a
/// register: half of each 16-lane FMA unused).
fn tile_row(full: i64, size: i64, itemsize: usize, max_upcast: i64) -> (i64, i64) {
    let w = vector_width(full, size);
    let nr = if size % (2 * w) == 0 && 2 * w <= max_upcast {
        2 * w
    } else {
        w
    };
    let split = (nr, nr / w);
    if size % full == 0 || size > max_upcast {
        return split;
    }
    let whole = vector_pieces(size, full, itemsize)
        .map(|pieces| pieces.iter().map(|p| p.count).sum::<i64>());
    match whole {
        Some(regs) if regs <= WHOLE_ROW_REGISTERS && size > w * regs => (size, regs),
        _ => split,
    }
}

/// The lanes of `j`'s vectors for a register tile along an axis of
/// `size` elements on a target with `full`-lane vectors: the largest
/// power of two up to `full` that divides `size` (a 56-wide image row
/// gets 8-lane vectors where a register holds 16), at least 4 when `4`
/// divides `size`.
fn vector_width(full: i64, size: i64) -> i64 {
    let mut w = 4;
    while w * 2 <= full && size % (w * 2) == 0 {
        w *= 2;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::tile_rows;

    #[test]
    fn tile_rows_pad_only_for_latency_and_little_waste() {
        // AVX-512 (32 registers), two vectors a row: 8 rows divide 1024
        assert_eq!(tile_rows(1024, 2, 32), (Some(8), None));
        // AVX2 (16 registers): 4 rows divide but give 8 accumulators; 6
        // fit and 1026 rows add 2 ≤ 1024/32
        assert_eq!(tile_rows(1024, 2, 16), (Some(4), Some(6)));
        assert_eq!(tile_rows(64, 2, 16), (Some(4), Some(6)));
        // 24 rows for 20 add more than 20/32: 4 rows stay
        assert_eq!(tile_rows(20, 2, 16), (Some(4), None));
        // four vectors a row (a convolution's whole row): 4 rows of 4
        // vectors are 16 accumulators, enough
        assert_eq!(tile_rows(56, 4, 32), (Some(4), None));
        // nothing divides a prime: pad to the most that fit
        assert_eq!(tile_rows(1031, 2, 16), (None, Some(6)));
        // the rows of a 7×7 or 14×14 feature map: 7 rows of 2 vectors
        assert_eq!(tile_rows(49, 2, 32), (Some(7), None));
        assert_eq!(tile_rows(14, 2, 32), (Some(7), None));
    }
}
