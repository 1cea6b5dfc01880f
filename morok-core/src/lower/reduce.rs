//! Reduce lowering: the declarative `REDUCE(value, ranges...)` becomes an
//! accumulator register that is initialised, updated inside the reduce
//! loops, and read after them.

use super::linearize::live_ranges;
use super::LowerError;
use crate::dtype::AddrSpace;
use crate::rewrite::{graph_rewrite_bottom_up, PatternMatcher};
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// State of the pass: the next free register slot and the live-range
/// memo shared across rule applications.
struct Ctx {
    next_reg: i64,
    live: HashMap<u64, Vec<Arc<UOp>>>,
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
    let mut ctx = Ctx {
        next_reg: 0,
        live: HashMap::new(),
    };
    Ok(graph_rewrite_bottom_up(&pm, g, &mut ctx)?)
}
