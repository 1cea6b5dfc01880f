//! Reduce lowering: the declarative `REDUCE(value, ranges...)` becomes an
//! accumulator register that is initialised, updated inside the reduce
//! loops, and read after them.

use super::live::live_ranges;
use super::LowerError;
use crate::dtype::AddrSpace;
use crate::rewrite::{graph_rewrite_bottom_up, PatternMatcher};
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// State of the pass: the next free register slot and the live-range
/// memo shared across rule applications.
struct Ctx {
    next_reg: i64,
    live: HashMap<u64, Vec<Arc<UOp>>>,
    /// Ranges already looped over by a lowered reduce.
    claimed: HashSet<u64>,
    /// The next unused `axis_id` (for fresh copies of shared ranges).
    next_axis: usize,
}

/// Gives `n` loops of its own: every reduce range that an already
/// lowered reduce loops over is replaced, in this reduce's value and
/// range list, by a fresh copy (same end and type, a new `axis_id`).
/// Two reduces sharing a RANGE node (e.g. `max` then `sum` over the same
/// axis) would otherwise both be updated in one loop, and the second
/// needs the first's final value inside it.
fn own_ranges(n: &Arc<UOp>, ctx: &mut Ctx) -> Arc<UOp> {
    let mut map = HashMap::new();
    for r in &n.src()[1..] {
        if !ctx.claimed.insert(r.id()) {
            let Arg::Range { axis_type, .. } = *r.arg() else {
                continue;
            };
            let fresh = UOp::range(r.s(0), ctx.next_axis, axis_type);
            ctx.next_axis += 1;
            ctx.claimed.insert(fresh.id());
            map.insert(r.id(), fresh);
        }
    }
    if map.is_empty() {
        n.clone()
    } else {
        substitute_outside_registers(n, &map)
    }
}

/// Replaces nodes by id like [`UOp::substitute`], but leaves register
/// accesses (`AFTER(DEFINE_REG, ...)`, the results of reduces lowered
/// earlier) untouched: those reduces bound their ranges themselves, so a
/// range inside them is theirs, not the one being renamed.
fn substitute_outside_registers(root: &Arc<UOp>, map: &HashMap<u64, Arc<UOp>>) -> Arc<UOp> {
    let is_reg = |n: &UOp| n.op() == Op::After && n.s(0).op() == Op::DefineReg;
    let mut done: HashMap<u64, Arc<UOp>> = HashMap::new();
    let mut stack = vec![(root.clone(), false)];
    while let Some((n, expanded)) = stack.pop() {
        if done.contains_key(&n.id()) {
            continue;
        }
        if let Some(r) = map.get(&n.id()) {
            done.insert(n.id(), r.clone());
        } else if is_reg(&n) {
            done.insert(n.id(), n.clone());
        } else if expanded {
            let src: Srcs = n.src().iter().map(|s| done[&s.id()].clone()).collect();
            done.insert(n.id(), n.with_sources(src));
        } else {
            stack.push((n.clone(), true));
            stack.extend(n.src().iter().map(|s| (s.clone(), false)));
        }
    }
    done[&root.id()].clone()
}

fn after(x: &Arc<UOp>, deps: &[Arc<UOp>]) -> Arc<UOp> {
    if deps.is_empty() {
        return x.clone();
    }
    let mut src: Srcs = Srcs::new();
    src.push(x.clone());
    src.extend(deps.iter().cloned());
    UOp::new(Op::After, x.dtype(), src, Arg::None)
}

/// Lowers one `REDUCE(value, r...)` with op `⊕` and identity `e`:
///
/// ```text
/// acc  = DEFINE_REG(slot) : RegPtr<T>
/// init = STORE(INDEX(AFTER(acc, outer...), 0), e)       -- once per outer iteration
/// cur  = INDEX(AFTER(acc, init, r...), 0)                -- inside the reduce loops
/// upd  = END(STORE(cur, LOAD(cur) ⊕ value), r...)
/// out  = LOAD(INDEX(AFTER(acc, upd), 0))                 -- after the loops close
/// ```
///
/// `outer` are the ranges `value` depends on other than `r`: depending on
/// them places the initialisation inside those loops, so each output
/// element starts from `e`. `cur` depends on the reduce ranges through
/// `AFTER`, so the update sits inside every reduce loop even when `value`
/// does not use some of them (a sum of a constant counts iterations).
/// The result depends only on `upd`, so it is placed after the loops.
/// Correct because `e ⊕ v₁ ⊕ … ⊕ vₙ` is the reduction of the `vᵢ`.
fn lower_reduce(n: &Arc<UOp>, ctx: &mut Ctx) -> Option<Arc<UOp>> {
    let Arg::Reduce(op) = *n.arg() else {
        return None;
    };
    let n = &own_ranges(n, ctx);
    let value = n.s(0);
    let ranges: Vec<Arc<UOp>> = n.src()[1..].to_vec();
    let outer: Vec<Arc<UOp>> = live_ranges(value, &mut ctx.live)
        .into_iter()
        .filter(|r| !ranges.iter().any(|x| Arc::ptr_eq(x, r)))
        .collect();
    let dtype = n.dtype();
    let zero = UOp::index(0);
    let acc = UOp::new(
        Op::DefineReg,
        dtype.ptr(AddrSpace::Reg),
        Srcs::new(),
        Arg::Int(ctx.next_reg),
    );
    ctx.next_reg += 1;
    let identity = UOp::const_(dtype, op.identity(dtype.scalar_type()));
    let init = reg_index(&after(&acc, &outer), &zero).store(&identity);
    let mut deps = vec![init];
    deps.extend(ranges.iter().cloned());
    let cur = reg_index(&after(&acc, &deps), &zero);
    let upd = cur.store(&cur.load().bin(op.alu(), value)).end(&ranges);
    Some(reg_index(&after(&acc, &[upd]), &zero).load())
}

/// `INDEX(reg, i)` on a register (possibly behind `AFTER`).
fn reg_index(reg: &Arc<UOp>, i: &Arc<UOp>) -> Arc<UOp> {
    let src: Srcs = [reg.clone(), i.clone()].into_iter().collect();
    UOp::new(Op::Index, reg.dtype(), src, Arg::None)
}

/// Lowers every `REDUCE` of the graph, innermost first (bottom-up), so a
/// reduce nested in another's value is already an accumulator read when
/// the outer one is lowered.
pub fn lower_reduces(g: &Arc<UOp>) -> Result<Arc<UOp>, LowerError> {
    let mut pm: PatternMatcher<Ctx> = PatternMatcher::new("lower_reduce");
    pm.rule(&[Op::Reduce], lower_reduce);
    let next_axis = g
        .toposort()
        .iter()
        .filter_map(|n| match n.arg() {
            Arg::Range { axis_id, .. } => Some(axis_id + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut ctx = Ctx {
        next_reg: 0,
        live: HashMap::new(),
        claimed: HashSet::new(),
        next_axis,
    };
    Ok(graph_rewrite_bottom_up(&pm, g, &mut ctx)?)
}
