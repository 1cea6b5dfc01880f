//! The buffer slots of a kernel: element type, read/written, and the
//! element range each may touch ([`BufferSlot::access`], from the
//! interval evaluator of [`super::bounds`]), plus for kernels with
//! variables that range as expressions of them
//! ([`BufferSlot::access_form`], built by `var_access`).

use super::bounds::{gated_access, is_data_dependent, Bounds};
use super::live::live_ranges;
use super::var_access::{access_form, AccessForm};
use super::{BufferSlot, LowerError};
use crate::symbolic::interp::Program;
use crate::uop::{Arg, ConstValue, Op, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The ranges whose loops never run, by id: a `RANGE` with a constant
/// end of at most 0, every range an `END` or `REDUCE` opens inside one
/// (listed after it: `END(x, r0, r1)` nests `r1` in `r0`), and the ranges
/// of a `REDUCE` whose value varies with one (the reduce's loops sit in
/// that loop). Computed to a fixpoint, since reduces nest.
fn dead_ranges(nodes: &[Arc<UOp>], live: &mut HashMap<u64, Vec<Arc<UOp>>>) -> HashSet<u64> {
    let mut dead: HashSet<u64> = nodes
        .iter()
        .filter(|n| n.op() == Op::Range && n.s(0).const_int().is_some_and(|end| end <= 0))
        .map(|n| n.id())
        .collect();
    loop {
        let before = dead.len();
        for n in nodes {
            if !matches!(n.op(), Op::End | Op::Reduce) {
                continue;
            }
            let own = &n.src()[1..];
            let mut inside = n.op() == Op::Reduce
                && live_ranges(n.s(0), live)
                    .iter()
                    .any(|r| dead.contains(&r.id()) && !own.iter().any(|o| Arc::ptr_eq(o, r)));
            for r in own {
                inside |= dead.contains(&r.id());
                if inside {
                    dead.insert(r.id());
                }
            }
        }
        if dead.len() == before {
            return dead;
        }
    }
}

/// The buffer slots of a kernel AST: element type, read/written, and the
/// element range accessed by index expressions computed from ranges and
/// constants. A gated access is bounded with its gate's range constraints
/// applied; an access under an unsatisfiable gate, or inside a loop that
/// never runs (a range of end 0 or one nested in it), touches nothing; a
/// data-dependent access is left to run-time checks
/// ([`is_data_dependent`]).
///
/// The slots are the `DEFINE_GLOBAL`s of `declared`, the kernel AST as the
/// caller wrote it: a buffer whose every access a rewrite removed (a
/// no-op store, say) stays a slot, neither read nor written.
pub fn buffer_slots(ast: &Arc<UOp>, declared: &Arc<UOp>) -> Result<Vec<BufferSlot>, LowerError> {
    let mut slots: Vec<Option<BufferSlot>> = Vec::new();
    let mut plain = Bounds::default();
    let mut enumeration_budget = ENUMERATION_BUDGET;
    let nodes = ast.toposort();
    let mut live = HashMap::new();
    let dead = dead_ranges(&nodes, &mut live);
    // Kernels with variables also get their ranges as expressions of the
    // variables (`BufferSlot::access_form`), by slot.
    let with_vars = nodes.iter().any(|n| n.op() == Op::DefineVar);
    let mut forms: HashMap<i64, Option<AccessForm>> = HashMap::new();
    // A store runs inside every range its END closes.
    let dead_stores: HashSet<u64> = nodes
        .iter()
        .filter(|n| n.op() == Op::End && n.src()[1..].iter().any(|r| dead.contains(&r.id())))
        .map(|n| n.s(0).id())
        .collect();
    for n in declared.toposort() {
        if n.op() == Op::DefineGlobal {
            let Arg::Int(slot) = *n.arg() else {
                return Err(LowerError::malformed("DEFINE_GLOBAL without slot", &n));
            };
            let slot = slot as usize;
            if slots.len() <= slot {
                slots.resize(slot + 1, None);
            }
            slots[slot].get_or_insert(BufferSlot {
                dtype: n.dtype().pointee(),
                written: false,
                read: false,
                access: None,
                access_form: None,
            });
        }
    }
    for n in &nodes {
        if !matches!(n.op(), Op::Load | Op::Store) {
            continue;
        }
        let index = n.s(0);
        if crate::kernel::indexes_shared(index) {
            continue; // shared memory of a grouped reduce (`group_reduce`)
        }
        let Arg::Int(slot) = *index.s(0).arg() else {
            return Err(LowerError::malformed("INDEX of a non-buffer", index));
        };
        let never_runs = dead_stores.contains(&n.id())
            || live_ranges(n, &mut live)
                .iter()
                .any(|r| dead.contains(&r.id()));
        let gate = index.src().get(2);
        let (range, form) = match gate {
            _ if never_runs => (None, None),
            // Checked per access at run time instead (see `is_data_dependent`).
            _ if is_data_dependent(index.s(1)) => (None, None),
            None => {
                let range = plain.of(index.s(1));
                let form = with_vars.then(|| access_form(index.s(1), None, &plain, range));
                (Some(range), form)
            }
            Some(g) => match gated_access(g, index.s(1), &mut plain) {
                Some((range, gated)) => {
                    let form = with_vars.then(|| access_form(index.s(1), gate, &gated, range));
                    (Some(range), form)
                }
                None => (None, None),
            },
        };
        // Where the loops are few, the exact range replaces the intervals'.
        let (range, form) = match (
            range,
            enumerated_access(index.s(1), gate, &mut enumeration_budget),
        ) {
            (Some(_), Some(None)) => (None, None),
            (Some(r), Some(Some(e))) => (Some((r.0.max(e.0), r.1.min(e.1))), form),
            (range, _) => (range, form),
        };
        // A slot has a form when every access that happens has one.
        if let Some(form) = form {
            let merged = match (forms.get(&slot), form) {
                (None, f) => f,
                (Some(Some(a)), Some(b)) => Some(a.union(&b)),
                (Some(_), _) => None,
            };
            forms.insert(slot, merged);
        }
        let Some(entry) = slots.get_mut(slot as usize).and_then(|s| s.as_mut()) else {
            return Err(LowerError::malformed("INDEX of an unknown slot", index));
        };
        if n.op() == Op::Load {
            entry.read = true;
        } else {
            entry.written = true;
        }
        if let Some((lo, hi)) = range {
            let (lo, hi) = (
                lo.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                hi.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
            );
            entry.access = Some(match entry.access {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.map(|mut s| {
                s.access_form = forms.remove(&(i as i64)).flatten();
                s
            })
            .ok_or_else(|| LowerError::Malformed {
                what: format!("buffer slot {i} is never used (slots must be 0..n)"),
                node: format!("{:?}", ast),
            })
        })
        .collect()
}

/// The most node evaluations [`enumerated_access`] spends on one kernel:
/// enough for the accesses of a kernel whose loops run a few thousand
/// times, so the exact ranges cost small kernels little and large ones
/// nothing.
const ENUMERATION_BUDGET: i128 = 1 << 17;

/// The exact element range of a gated access or of one whose index
/// divides (`IDIV`, `MOD`): the index evaluated at every assignment of the
/// loop ranges it and its gate read, where the gate opens (`Some(None)`: it
/// never does). Interval bounds of quotient and remainder chains, and of a
/// gate that ties several ranges (a `cat` of padded, flipped views, or an
/// unrolled cumulative sum, say) can be loose enough that the launch check
/// refuses a correct kernel; where the assignments times the expression's
/// nodes fit in what is left of the kernel's `budget` (taken from it), the
/// exact answer is cheap. `None` where it does not apply: no gate and no
/// division, a range without a constant end, over budget, or a value the
/// evaluator cannot compute (a variable, a load, an undefined operation).
fn enumerated_access(
    index: &Arc<UOp>,
    gate: Option<&Arc<UOp>>,
    budget: &mut i128,
) -> Option<Option<(i128, i128)>> {
    let roots: Vec<&Arc<UOp>> = std::iter::once(index).chain(gate).collect();
    let nodes: Vec<Arc<UOp>> = roots.iter().flat_map(|r| r.toposort()).collect();
    if gate.is_none() && !nodes.iter().any(|n| matches!(n.op(), Op::Idiv | Op::Mod)) {
        return None;
    }
    let mut ranges: Vec<(u64, i64)> = Vec::new();
    let mut cost: i128 = nodes.len() as i128;
    for n in nodes.iter().filter(|n| n.op() == Op::Range) {
        if ranges.iter().any(|&(id, _)| id == n.id()) {
            continue;
        }
        let end = n.s(0).const_int()?.max(0);
        cost = cost.saturating_mul(end);
        if cost > *budget {
            return None;
        }
        ranges.push((n.id(), end as i64));
    }
    if cost == 0 {
        return Some(None);
    }
    *budget -= cost;
    let index_program = Program::new(index);
    let gate_program = gate.map(Program::new);
    let mut values: Vec<i64> = vec![0; ranges.len()];
    let mut leaves: HashMap<u64, ConstValue> = HashMap::new();
    let mut found: Option<(i128, i128)> = None;
    loop {
        for (&(id, _), &v) in ranges.iter().zip(&values) {
            leaves.insert(id, ConstValue::Int(v));
        }
        let open = match &gate_program {
            Some(p) => p.run(&leaves)?.first()?.truthy(),
            None => true,
        };
        if open {
            let at = index_program.run(&leaves)?.first()?.as_i128()?;
            found = Some(found.map_or((at, at), |(lo, hi)| (lo.min(at), hi.max(at))));
        }
        // The next assignment (an odometer over the ranges).
        let mut k = 0;
        loop {
            let Some(v) = values.get_mut(k) else {
                return Some(found);
            };
            *v += 1;
            if *v < ranges[k].1 {
                break;
            }
            *v = 0;
            k += 1;
        }
    }
}
