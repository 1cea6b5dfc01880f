//! The scheduling pipeline's driver: [`schedule`] runs the stages listed
//! in the module docs of [`super`] in order, counting its runs
//! ([`pipeline_runs`]), and emits each stage's IR on the `morok::ir`
//! tracing target.

use super::{kernelize, ordering, rangeify, row_fusion, Schedule, ScheduleError};

use crate::rewrite::{graph_rewrite, graph_rewrite_bottom_up, PatternMatcher};
use crate::shape::numel;
use crate::uop::tensor_shape;
use crate::uop::{new_buffer_id, Arg, Op, OpGroup, Srcs, UOp};
use rangeify::indexing::{indexing_rules, IndexingCtx};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

static PIPELINE_RUNS: AtomicUsize = AtomicUsize::new(0);

/// How many times the uncached pipeline ([`schedule()`]) has run in this
/// process.
pub fn pipeline_runs() -> usize {
    PIPELINE_RUNS.load(Ordering::Relaxed)
}

/// Emits a stage's IR on the `morok::ir` tracing target.
fn trace_stage(stage: &str, node: &Arc<UOp>) {
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
    PIPELINE_RUNS.fetch_add(1, Ordering::Relaxed);
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
    let sched = ordering::build(&graph, outputs)?;
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
