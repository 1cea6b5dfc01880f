//! Scheduling: from a tensor-level graph to an ordered list of kernels.
//!
//! [`schedule()`] runs the pipeline:
//!
//! 1. `zero-size` ([`rangeify::zero_size`]): nodes without elements become
//!    constants, reductions over no elements their identity;
//! 2. `split-reduce` ([`rangeify::split_reduce`]): huge reductions in two stages;
//! 3. `realize` ([`rangeify::realize`]): where kernels split;
//! 4. `rangeify` ([`rangeify::indexing`]): movement ops become index
//!    arithmetic, realized nodes BUFFERIZE nodes;
//! 5. `simplify` ([`rangeify::index_simplify`], [`rangeify::reduce_simplify`],
//!    [`rangeify::reduce_unparented`],
//!    [`rangeify::gather_collapse`] and the shared [`crate::symbolic::symbolic`] rules);
//! 6. `buffers` ([`rangeify::buffer_removal`]): folding, inlining, dead axes;
//! 7. `row-fusion` ([`row_fusion`]): short row reductions (softmax's max
//!    and sum, layernorm's mean and variance) move into the kernel that
//!    broadcasts them back over the row;
//! 8. `kernelize` ([`kernelize`]): BUFFERIZE → STORE → KERNEL;
//!    `kernel-ranges` ([`rangeify::kernel_range_rules`]): each kernel's
//!    loops split, merged and cut at constant comparisons;
//! 9. `schedule` ([`schedule`](mod@schedule)): items in dependency order and
//!    parallel groups; [`memory`]: storage reuse between intermediates.
//!
//! Each stage's IR is emitted with `tracing` (target `morok::ir`, level
//! TRACE, field `stage`). [`cache::schedule_cached`] skips the pipeline for
//! graphs whose structure was seen before.

pub mod cache;
pub mod instantiate;
mod items;
pub mod kernelize;
pub mod memory;
pub mod rangeify;
pub mod row_fusion;
#[allow(clippy::module_inception)]
pub mod schedule;

pub use cache::{pipeline_runs, schedule_cached};
pub use items::{BufferKind, BufferSpec, Schedule, ScheduleError, ScheduleItem};

use crate::rewrite::{graph_rewrite, graph_rewrite_bottom_up, PatternMatcher};
use crate::shape::numel;
use crate::uop::tensor_shape;
use crate::uop::{new_buffer_id, Arg, Op, OpGroup, Srcs, UOp};
use rangeify::indexing::{indexing_rules, IndexingCtx};
use std::collections::HashMap;
use std::sync::Arc;

/// Emits a stage's IR on the `morok::ir` tracing target.
pub(crate) fn trace_stage(stage: &str, node: &Arc<UOp>) {
    if tracing::enabled!(target: "morok::ir", tracing::Level::TRACE) {
        tracing::trace!(target: "morok::ir", stage, "{}", node.tree());
    }
}

/// If `root` only re-views an input buffer in its own element order,
/// returns that buffer (no kernel is needed to compute it).
fn input_view(root: &Arc<UOp>) -> Option<Arc<UOp>> {
    let mut n = root.clone();
    while matches!(n.op(), Op::Reshape | Op::Detach) {
        n = n.s(0).clone();
    }
    let whole = matches!(n.arg(), Arg::Buffer { size, .. }
        if tensor_shape(root).is_ok_and(|s| numel(&s) == *size));
    (n.op() == Op::Buffer && whole).then_some(n)
}

/// The index, reduce and shared symbolic rules, as one fixpoint.
pub(crate) fn simplify_rules() -> PatternMatcher {
    crate::symbolic::symbolic()
        .combined(&rangeify::index_simplify::index_rules(), "simplify")
        .combined(&rangeify::gated_index::gated_index_rules(), "simplify")
        .combined(&rangeify::reduce_simplify::reduce_rules(), "simplify")
        .combined(
            &rangeify::reduce_unparented::reduce_unparented_rules(),
            "simplify",
        )
        .combined(&rangeify::gather_collapse::gather_rules(), "simplify")
}

/// Fails if a tensor-level op survived rangeify (an op without a rule).
fn check_rangeified(sink: &Arc<UOp>) -> Result<(), ScheduleError> {
    for n in sink.toposort() {
        let tensor_level = matches!(n.op().group(), OpGroup::Movement | OpGroup::Tensor)
            || n.op() == Op::ReduceAxis
            || (rangeify::is_view_index(&n) && n.s(0).op() != Op::Bufferize);
        if tensor_level {
            return Err(ScheduleError::Unsupported {
                op: n.op().dump_name(),
                shape: tensor_shape(&n).map(|s| s.to_vec()).unwrap_or_default(),
                reason: "left over after rangeify".into(),
            });
        }
    }
    Ok(())
}

/// Schedules the roots (tensor-level nodes) without the cache; see the
/// module docs for the stages. Bumps [`pipeline_runs`].
pub fn schedule(roots: &[Arc<UOp>]) -> Result<Schedule, ScheduleError> {
    cache::count_pipeline_run();
    for r in roots {
        tensor_shape(r)?;
    }
    let sink = UOp::sink(roots.iter().cloned().collect::<Srcs>());
    trace_stage("input", &sink);

    let sink = graph_rewrite_bottom_up(&rangeify::zero_size::zero_size_rules(), &sink, &mut ())?;
    trace_stage("zero-size", &sink);

    let sink = graph_rewrite_bottom_up(
        &rangeify::split_reduce::split_reduce_rules(),
        &sink,
        &mut (),
    )?;
    trace_stage("split-reduce", &sink);
    let roots: Vec<Arc<UOp>> = sink.src().to_vec();

    let mut kernel_roots: Vec<Arc<UOp>> = Vec::new();
    for r in &roots {
        if input_view(r).is_none() && !kernel_roots.iter().any(|k| Arc::ptr_eq(k, r)) {
            kernel_roots.push(r.clone());
        }
    }
    let realization = rangeify::realize::realization(&sink, &kernel_roots)?;
    let mut ctx = IndexingCtx {
        realize: realization.realize,
        removable: realization.removable,
        outputs: kernel_roots
            .iter()
            .map(|r| (r.id(), new_buffer_id()))
            .collect(),
        ..IndexingCtx::default()
    };
    let bufs: Srcs = kernel_roots
        .iter()
        .map(|r| ctx.bufferize(r))
        .collect::<Result<_, _>>()?;
    let out_ids: HashMap<u64, u64> = ctx.outputs.clone();
    let mut graph = graph_rewrite(&indexing_rules(), &UOp::sink(bufs), &mut ctx)?;
    check_rangeified(&graph)?;
    trace_stage("rangeify", &graph);

    let simplify = simplify_rules();
    graph = graph_rewrite(&simplify, &graph, &mut ())?;
    trace_stage("simplify", &graph);
    let buffers = simplify.combined(&rangeify::buffer_removal::buffer_rules(), "buffers");
    graph = graph_rewrite(&buffers, &graph, &mut ())?;
    trace_stage("buffers", &graph);

    let mut fusion = row_fusion::RowFusion::analyze(&graph);
    if !fusion.is_empty() {
        graph = graph_rewrite(&row_fusion::row_fusion_rules(), &graph, &mut fusion)?;
        trace_stage("row-fusion", &graph);
    }

    let loads = kernelize::load_rules().combined(&simplify, "bufferize-loads");
    graph = graph_rewrite(&loads, &graph, &mut ())?;
    graph = graph_rewrite_bottom_up(&kernelize::kernel_rules(), &graph, &mut ())?;
    trace_stage("kernelize", &graph);
    let mut ranges = rangeify::KernelRanges { simplify };
    graph = graph_rewrite_bottom_up(&rangeify::kernel_range_rules(), &graph, &mut ranges)?;
    trace_stage("kernel-ranges", &graph);

    let outputs = roots
        .iter()
        .map(|r| output_node(r, &out_ids))
        .collect::<Result<Vec<_>, _>>()?;
    let sched = schedule::build(&graph, outputs)?;
    for (i, item) in sched.items.iter().enumerate() {
        tracing::trace!(target: "morok::ir", stage = "schedule", item = i, buffers = ?item.buffers, "{}", item.ast.tree());
    }
    Ok(sched)
}

/// The tensor-level node that holds a root's value after the schedule ran.
fn output_node(root: &Arc<UOp>, out_ids: &HashMap<u64, u64>) -> Result<Arc<UOp>, ScheduleError> {
    let Some(&id) = out_ids.get(&root.id()) else {
        return Ok(root.clone());
    };
    let shape = tensor_shape(root)?;
    let size = numel(&shape);
    let buf = UOp::new(
        Op::Buffer,
        root.dtype().base(),
        Srcs::new(),
        Arg::Buffer { id, size },
    );
    Ok(if shape.as_slice() == [size] {
        buf
    } else {
        UOp::new(
            Op::Reshape,
            buf.dtype(),
            Srcs::from_iter([buf]),
            Arg::Shape(shape),
        )
    })
}
