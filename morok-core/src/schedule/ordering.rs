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
        let mut ids = Vec::with_capacity(k.src().len() - 1);
        for (slot, b) in k.src()[1..].iter().enumerate() {
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
        items.push(ScheduleItem {
            ast: k.s(0).clone(),
            buffers: ids,
        });
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
