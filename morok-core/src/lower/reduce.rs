//! Reduce lowering: the declarative `REDUCE(value, ranges...)` becomes an
//! accumulator register that is initialised, updated inside the reduce
//! loops, and read after them.
//!
//! Two things come from the optimizer (`crate::opt`):
//!
//! - `UNROLL` ranges (constant size) get no loop: the update folds the
//!   value of each lane into the accumulator in lane order, which is the
//!   order the loop would have visited them;
//! - independent reduces over the same ranges with the same outer ranges
//!   (the lanes of an upcast output, see [`super::expand`]) share one
//!   loop, so their accumulators form a register tile.
//!
//! With `fma`, a float sum of products accumulates through `MULACC`
//! (rendered as a fused multiply-add, one rounding instead of two).

use super::live::live_ranges;
use super::LowerError;
use crate::dtype::AddrSpace;
use crate::dtype::DType;
use crate::rewrite::{graph_rewrite_bottom_up, PatternMatcher};
use crate::uop::{Arg, AxisType, Op, ReduceOp, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One loop shared by reduces: the outer range ids of the reduces updated
/// in it, and their accumulators.
type SharedLoop = (Vec<u64>, Vec<Arc<UOp>>);

/// State of the pass: the next free register slot and the live-range
/// memo shared across rule applications.
struct Ctx {
    next_reg: i64,
    live: HashMap<u64, Vec<Arc<UOp>>>,
    /// Ranges already looped over by a lowered reduce.
    claimed: HashSet<u64>,
    /// The next unused `axis_id` (for fresh copies of shared ranges).
    next_axis: usize,
    /// Loops of lowered reduces, by their range ids (in order): the outer
    /// range ids of the reduces updated in it, and their accumulators.
    loops: HashMap<Vec<u64>, SharedLoop>,
    /// Form `MULACC` for float sums of products.
    fma: bool,
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
            if let Some(fresh) = fresh_range(r, ctx) {
                map.insert(r.id(), fresh);
            }
        }
    }
    if map.is_empty() {
        n.clone()
    } else {
        substitute_outside_registers(n, &map, ctx)
    }
}

/// A fresh copy of range `r` (same end and type, a new `axis_id`),
/// claimed; `None` if `r` is not a range.
fn fresh_range(r: &Arc<UOp>, ctx: &mut Ctx) -> Option<Arc<UOp>> {
    let Arg::Range { axis_type, .. } = *r.arg() else {
        return None;
    };
    let fresh = UOp::range(r.s(0), ctx.next_axis, axis_type);
    ctx.next_axis += 1;
    ctx.claimed.insert(fresh.id());
    Some(fresh)
}

/// Replaces nodes by id like [`UOp::substitute`], except that inside a
/// register access (`AFTER(DEFINE_REG, ...)`, the result of a reduce
/// lowered earlier) the ranges that reduce loops over itself (those its
/// `END`s close) are not renamed as such: those loops are its own. A range
/// the inner reduce only reads (the outer reduce's range in its gate, say)
/// is renamed inside it too: left alone, the inner accumulator would stay
/// in the old loop, which another reduce closes elsewhere, and the range
/// would be live where no `END` closes it. An inner reduce that changes
/// so is a copy of the computation, run in the new loop: it gets its own
/// registers and fresh copies of its own loop ranges (sharing either with
/// the original would put one accumulator, or one loop, in two places).
///
/// A node shared by several contexts (outside every register, inside one)
/// is rewritten once per context (`maps[k]`: the renaming in context `k`;
/// `copying[k]`: everything inside is being copied).
fn substitute_outside_registers(
    root: &Arc<UOp>,
    map: &HashMap<u64, Arc<UOp>>,
    ctx: &mut Ctx,
) -> Arc<UOp> {
    let is_reg = |n: &UOp| n.op() == Op::After && n.s(0).op() == Op::DefineReg;
    let mut maps: Vec<HashMap<u64, Arc<UOp>>> = vec![map.clone()];
    let mut copying: Vec<bool> = vec![false];
    // The context inside register `id` entered from context `k`.
    let mut inside: HashMap<(usize, u64), usize> = HashMap::new();
    let mut done: HashMap<(u64, usize), Arc<UOp>> = HashMap::new();
    let mut stack = vec![(root.clone(), 0usize, false)];
    while let Some((n, c, expanded)) = stack.pop() {
        if done.contains_key(&(n.id(), c)) {
            continue;
        }
        if let Some(r) = maps[c].get(&n.id()) {
            done.insert((n.id(), c), r.clone());
            continue;
        }
        let inner = match inside.get(&(c, n.id())) {
            Some(&k) => k,
            None if is_reg(&n) && !copying[c] => {
                let (k, copied) = register_context(&n, &maps[c], ctx);
                copying.push(copied);
                maps.push(k);
                inside.insert((c, n.id()), maps.len() - 1);
                maps.len() - 1
            }
            None => c,
        };
        if maps[inner].is_empty() {
            done.insert((n.id(), c), n.clone());
        } else if expanded {
            let src: Srcs = n
                .src()
                .iter()
                .map(|s| done[&(s.id(), inner)].clone())
                .collect();
            done.insert((n.id(), c), n.with_sources(src));
        } else {
            stack.push((n.clone(), c, true));
            stack.extend(n.src().iter().map(|s| (s.clone(), inner, false)));
        }
    }
    done[&(root.id(), 0)].clone()
}

/// The renaming inside register access `reg` (see
/// [`substitute_outside_registers`]): `outer` without the ranges `reg`'s
/// reduces loop over; if what is left touches `reg`'s computation, also
/// fresh registers for its `DEFINE_REG`s and fresh copies of those loop
/// ranges (the copy is a computation of its own; then `true`).
fn register_context(
    reg: &Arc<UOp>,
    outer: &HashMap<u64, Arc<UOp>>,
    ctx: &mut Ctx,
) -> (HashMap<u64, Arc<UOp>>, bool) {
    let nodes = reg.toposort();
    let owned: Vec<Arc<UOp>> = nodes
        .iter()
        .filter(|m| m.op() == Op::End)
        .flat_map(|m| m.src()[1..].to_vec())
        .collect();
    let mut kept: HashMap<u64, Arc<UOp>> = outer
        .iter()
        .filter(|(id, _)| !owned.iter().any(|r| r.id() == **id))
        .map(|(id, r)| (*id, r.clone()))
        .collect();
    if !nodes.iter().any(|m| kept.contains_key(&m.id())) {
        return (kept, false);
    }
    for r in &owned {
        if kept.contains_key(&r.id()) {
            continue;
        }
        if let Some(fresh) = fresh_range(r, ctx) {
            kept.insert(r.id(), fresh);
        }
    }
    for d in nodes.iter().filter(|m| m.op() == Op::DefineReg) {
        let fresh = UOp::new(
            Op::DefineReg,
            d.dtype(),
            Srcs::new(),
            Arg::Int(ctx.next_reg),
        );
        ctx.next_reg += 1;
        kept.insert(d.id(), fresh);
    }
    (kept, true)
}

/// `AFTER(x, deps...)`: `x` once `deps` are done (`x` itself for none).
pub(super) fn after(x: &Arc<UOp>, deps: &[Arc<UOp>]) -> Arc<UOp> {
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
///
/// `UNROLL` ranges among `r` are not looped: the update is
/// `(…(LOAD(cur) ⊕ value[u:=0]) ⊕ value[u:=1]…)`, the same sequence of
/// operations. (When a reduce already lowered inside `value` depends on
/// an unrolled range, that range stays a loop: the inner accumulator
/// needs one.)
fn lower_reduce(n: &Arc<UOp>, ctx: &mut Ctx) -> Option<Arc<UOp>> {
    let Arg::Reduce(op) = *n.arg() else {
        return None;
    };
    let (unrolled, looped) = split_unrolled(n, ctx);
    let outer: Vec<Arc<UOp>> = live_ranges(n.s(0), &mut ctx.live)
        .into_iter()
        .filter(|r| !n.src()[1..].iter().any(|x| Arc::ptr_eq(x, r)))
        .collect();
    let outer_ids: Vec<u64> = outer.iter().map(|r| r.id()).collect();
    let key: Vec<u64> = looped.iter().map(|r| r.id()).collect();
    let shared = !key.is_empty()
        && ctx.loops.get(&key).is_some_and(|(o, accs)| {
            *o == outer_ids
                && !n
                    .s(0)
                    .toposort()
                    .iter()
                    .any(|m| accs.iter().any(|a| Arc::ptr_eq(a, m)))
        });
    let (value, ranges) = if shared {
        (n.s(0).clone(), looped)
    } else {
        let renamed = own_ranges(&n.s(0).reduce(op, &looped), ctx);
        (renamed.s(0).clone(), renamed.src()[1..].to_vec())
    };
    let dtype = n.dtype();
    let zero = UOp::index(0);
    let acc = UOp::new(
        Op::DefineReg,
        dtype.ptr(AddrSpace::Reg),
        Srcs::new(),
        Arg::Int(ctx.next_reg),
    );
    ctx.next_reg += 1;
    if !ranges.is_empty() {
        let key: Vec<u64> = ranges.iter().map(|r| r.id()).collect();
        ctx.loops
            .entry(key)
            .or_insert_with(|| (outer_ids, Vec::new()))
            .1
            .push(acc.clone());
    }
    let identity = UOp::const_(dtype, op.identity(dtype.scalar_type()));
    let init = reg_index(&after(&acc, &outer), &zero).store(&identity);
    let mut deps = vec![init];
    deps.extend(ranges.iter().cloned());
    let cur = reg_index(&after(&acc, &deps), &zero);
    let fma = ctx.fma && op == ReduceOp::Add && matches!(dtype.base(), DType::F32 | DType::F64);
    let mut folded = cur.load();
    for lane in super::expand::lane_maps(&unrolled) {
        let v = value.substitute(&lane);
        folded = if fma && v.op() == Op::Mul {
            UOp::alu(Op::MulAcc, vec![v.s(0).clone(), v.s(1).clone(), folded])
        } else {
            folded.bin(op.alu(), &v)
        };
    }
    let upd = cur.store(&folded).end(&ranges);
    Some(reg_index(&after(&acc, &[upd]), &zero).load())
}

/// Splits the ranges of a reduce into those unrolled into the update (the
/// `UNROLL` ranges of constant size no lowered reduce inside the value
/// depends on) and those that stay loops, each in list order.
fn split_unrolled(n: &Arc<UOp>, ctx: &mut Ctx) -> (Vec<Arc<UOp>>, Vec<Arc<UOp>>) {
    let inner_regs: Vec<Arc<UOp>> = n
        .s(0)
        .toposort()
        .into_iter()
        .filter(|m| m.op() == Op::After && m.s(0).op() == Op::DefineReg)
        .collect();
    let mut unrolled = Vec::new();
    let mut looped = Vec::new();
    for r in &n.src()[1..] {
        let unroll = r.axis_type() == Some(AxisType::Unroll)
            && r.range_size().is_some()
            && !inner_regs.iter().any(|a| {
                live_ranges(a, &mut ctx.live)
                    .iter()
                    .any(|x| Arc::ptr_eq(x, r))
            });
        if unroll {
            unrolled.push(r.clone());
        } else {
            looped.push(r.clone());
        }
    }
    (unrolled, looped)
}

/// `INDEX(reg, i)` on a register (possibly behind `AFTER`).
fn reg_index(reg: &Arc<UOp>, i: &Arc<UOp>) -> Arc<UOp> {
    let src: Srcs = [reg.clone(), i.clone()].into_iter().collect();
    UOp::new(Op::Index, reg.dtype(), src, Arg::None)
}

/// Lowers every `REDUCE` of the graph, innermost first (bottom-up), so a
/// reduce nested in another's value is already an accumulator read when
/// the outer one is lowered. `fma`: see the module docs.
pub fn lower_reduces(g: &Arc<UOp>, fma: bool) -> Result<Arc<UOp>, LowerError> {
    let mut pm: PatternMatcher<Ctx> = PatternMatcher::new("lower_reduce");
    pm.rule(&[Op::Reduce], lower_reduce);
    let next_axis = crate::kernel::next_axis_id(g);
    let mut ctx = Ctx {
        next_reg: 0,
        live: HashMap::new(),
        claimed: HashSet::new(),
        next_axis,
        loops: HashMap::new(),
        fma,
    };
    Ok(graph_rewrite_bottom_up(&pm, g, &mut ctx)?)
}
