//! Schedule items from the kernel graph, in dependency order, with
//! parallel groups (Kahn levels) and the buffer table.
//!
//! After kernel splitting, every kernel is a KERNEL node whose operands
//! after the AST are its buffers; a buffer written by another kernel is
//! that kernel's `AFTER(BUFFER, KERNEL)`. A kernel's level is one more than
//! the highest level of the kernels it reads from (0 without any), which is
//! Kahn's algorithm peeled level by level: kernels of one level never read
//! each other's output, so a level can run in parallel.

use super::{memory, BufferKind, BufferSpec, Schedule, ScheduleError, ScheduleItem};
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher};
use crate::uop::{Arg, Op, UOp};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The BUFFER under a chain of AFTERs.
fn buffer_of(mut n: &Arc<UOp>) -> Option<&Arc<UOp>> {
    while n.op() == Op::After {
        n = n.s(0);
    }
    (n.op() == Op::Buffer).then_some(n)
}

fn buffer_arg(b: &UOp) -> Option<(u64, usize)> {
    match b.arg() {
        Arg::Buffer { id, size } => Some((*id, *size)),
        _ => None,
    }
}

fn not_a_buffer(n: &Arc<UOp>) -> ScheduleError {
    ScheduleError::Unsupported {
        op: n.op().dump_name(),
        shape: Vec::new(),
        reason: "kernel operand is not a buffer".into(),
    }
}

/// A kernel AST whose accesses to some of its `n` buffers a rewrite after
/// kernel splitting folded away (`x - x` of one input is 0): the unread
/// buffers leave the kernel and the remaining `DEFINE_GLOBAL`s are
/// renumbered `0..` in slot order, so the launch passes exactly the
/// buffers the kernel declares. Returns the AST and the kept slots (slot
/// 0, the output, always stays).
fn drop_unread_slots(ast: &Arc<UOp>, n: usize) -> Result<(Arc<UOp>, Vec<usize>), ScheduleError> {
    let mut read: Vec<bool> = vec![false; n];
    for g in ast.toposort().iter().filter(|g| g.op() == Op::DefineGlobal) {
        if let Arg::Int(slot) = *g.arg() {
            if let Some(r) = usize::try_from(slot).ok().and_then(|s| read.get_mut(s)) {
                *r = true;
            }
        }
    }
    if let Some(r) = read.first_mut() {
        *r = true;
    }
    let kept: Vec<usize> = (0..n).filter(|&s| read[s]).collect();
    if kept.len() == n {
        return Ok((ast.clone(), kept));
    }
    // Two passes through slots `n..` (no key of one pass is a value of
    // it, so a renumbered node is never renumbered again): old → n + new,
    // then n + new → new.
    let shift = n as i64;
    let mut up: HashMap<i64, i64> = kept
        .iter()
        .enumerate()
        .map(|(new, &old)| (old as i64, shift + new as i64))
        .collect();
    let mut down: HashMap<i64, i64> = up.values().map(|&v| (v, v - shift)).collect();
    let ast = graph_rewrite(&renumber_slot_rules(), ast, &mut up)?;
    let ast = graph_rewrite(&renumber_slot_rules(), &ast, &mut down)?;
    Ok((ast, kept))
}

/// `DEFINE_GLOBAL(old)` → `DEFINE_GLOBAL(new)` by the context's map (the
/// slots of [`drop_unread_slots`]).
fn renumber_slot_rules() -> PatternMatcher<HashMap<i64, i64>> {
    patterns! {
        @context HashMap<i64, i64>;
        @name "renumber-slots";
        g @ DefineGlobal() => renumbered(g, ctx),
    }
}

/// The node `g` with its slot renumbered, or `None` where it keeps it.
fn renumbered(g: &Arc<UOp>, slots: &HashMap<i64, i64>) -> Option<Arc<UOp>> {
    let Arg::Int(old) = *g.arg() else {
        return None;
    };
    let new = *slots.get(&old)?;
    (new != old).then(|| UOp::define_global(new, g.dtype().base()))
}

/// Builds the schedule of the kernel graph `graph` (a SINK over
/// `AFTER(BUFFER, KERNEL)` nodes); `outputs` are the per-root results.
pub fn build(graph: &Arc<UOp>, outputs: Vec<Arc<UOp>>) -> Result<Schedule, ScheduleError> {
    let kernels: Vec<Arc<UOp>> = graph
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Kernel)
        .collect();
    let mut level: HashMap<u64, usize> = HashMap::new();
    for k in &kernels {
        let l = k.src()[1..]
            .iter()
            .filter(|b| b.op() == Op::After)
            .map(|b| level.get(&b.s(1).id()).map_or(0, |l| l + 1))
            .max()
            .unwrap_or(0);
        level.insert(k.id(), l);
    }
    // Stable by level: the toposort order is kept within a level.
    let mut order: Vec<usize> = (0..kernels.len()).collect();
    order.sort_by_key(|&i| level[&kernels[i].id()]);

    let output_ids: HashSet<u64> = outputs
        .iter()
        .flat_map(|o| o.toposort())
        .filter_map(|n| buffer_arg(&n).map(|(id, _)| id))
        .collect();
    let mut specs: BTreeMap<u64, BufferSpec> = BTreeMap::new();
    let mut items = Vec::with_capacity(kernels.len());
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &i in &order {
        let k = &kernels[i];
        let (ast, kept) = drop_unread_slots(k.s(0), k.src().len() - 1)?;
        let mut ids = Vec::with_capacity(kept.len());
        for (slot, b) in kept.iter().map(|&s| &k.src()[1 + s]).enumerate() {
            let buf = buffer_of(b).ok_or_else(|| not_a_buffer(b))?;
            let (id, size) = buffer_arg(buf).ok_or_else(|| not_a_buffer(b))?;
            // A buffer no kernel writes is an input, even when a root is
            // a view of it (`realize_all([x + 1, x.reshape(..)])`): taken
            // for an output, it was allocated fresh, so the kernels read
            // zeros for `x` and `x` itself was replaced by them.
            let written = slot == 0 || b.op() == Op::After;
            let kind = match (written, output_ids.contains(&id)) {
                (true, true) => BufferKind::Output,
                (true, false) => BufferKind::Intermediate,
                (false, _) => BufferKind::Input,
            };
            specs.entry(id).or_insert(BufferSpec {
                id,
                dtype: buf.dtype(),
                size,
                kind,
                storage: id,
            });
            ids.push(id);
        }
        let l = level[&k.id()];
        if groups.len() <= l {
            groups.resize(l + 1, Vec::new());
        }
        groups[l].push(items.len());
        items.push(ScheduleItem { ast, buffers: ids });
    }
    // Roots that are views of input buffers need no kernel but are buffers too.
    for o in &outputs {
        for n in o.toposort() {
            if let Some((id, size)) = buffer_arg(&n) {
                specs.entry(id).or_insert(BufferSpec {
                    id,
                    dtype: n.dtype(),
                    size,
                    kind: BufferKind::Input,
                    storage: id,
                });
            }
        }
    }
    let mut schedule = Schedule {
        items,
        groups,
        buffers: specs.into_values().collect(),
        outputs,
    };
    memory::plan(&mut schedule);
    Ok(schedule)
}
