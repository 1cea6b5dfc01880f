//! WHERE folding: constant and negated conditions, equal branches, nested
//! selects on related conditions, bool-valued selects as logic, min/max
//! recognition, and pushing constant operations into constant branches.

use super::eval::exec_alu;
use super::{compute_dtype, is_int};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use std::sync::Arc;

/// `op(where(c, k1, k2), k) → where(c, op(k1, k), op(k2, k))` for any
/// binary ALU op with constants (the select may be either operand), when
/// both folds are defined.
fn into_branches(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    if n.op().group() != OpGroup::Binary {
        return None;
    }
    let dtype = compute_dtype(n);
    for (w, k, select_first) in [(n.s(0), n.s(1), true), (n.s(1), n.s(0), false)] {
        let Some(kv) = k.const_value() else { continue };
        if w.op() != Op::Where {
            continue;
        }
        let (Some(a), Some(b)) = (w.s(1).const_value(), w.s(2).const_value()) else {
            continue;
        };
        let fold = |v: ConstValue| {
            let args = if select_first { [v, kv] } else { [kv, v] };
            exec_alu(n.op(), dtype, &args).map(|r| UOp::const_(n.dtype(), r))
        };
        if let (Some(x), Some(y)) = (fold(a), fold(b)) {
            return Some(w.s(0).where_(&x, &y));
        }
    }
    None
}

/// Binary ops defined on every pair of operands (no division by zero, no
/// oversized shift): a select may evaluate them on its unselected side.
fn total(op: Op) -> bool {
    matches!(
        op,
        Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Max
            | Op::Min
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::CmpLt
            | Op::CmpLe
            | Op::CmpEq
            | Op::CmpNe
    )
}

/// `op(where(c, a, b), where(c, d, e)) → where(c, op(a, d), op(b, e))`
/// for a binary op defined everywhere ([`total`]): both selects pick the
/// same side, and the side not picked computes nothing undefined.
fn merge_selects(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (l, r) = (n.src().first()?, n.src().get(1)?);
    if !total(n.op()) || l.op() != Op::Where || r.op() != Op::Where || !Arc::ptr_eq(l.s(0), r.s(0))
    {
        return None;
    }
    let op = |a: &Arc<UOp>, b: &Arc<UOp>| a.bin(n.op(), b);
    Some(l.s(0).where_(&op(l.s(1), r.s(1)), &op(l.s(2), r.s(2))))
}

/// `where(c, x, y)` where an operand of `x` (or `y`) is itself
/// `where(c, p, q)`: inside the true branch that select is `p`, inside the
/// false branch `q` (one level of operands of a [`total`] op, so the
/// branch not picked stays defined; repeated rewrites reach deeper ones
/// as the branches simplify).
fn same_condition_inside(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let c = n.s(0);
    let pick = |branch: &Arc<UOp>, lane: usize| -> Option<Arc<UOp>> {
        if !total(branch.op()) {
            return None;
        }
        let mut changed = false;
        let src: Vec<Arc<UOp>> = branch
            .src()
            .iter()
            .map(|s| {
                if s.op() == Op::Where && Arc::ptr_eq(s.s(0), c) {
                    changed = true;
                    s.s(lane).clone()
                } else {
                    s.clone()
                }
            })
            .collect();
        changed.then(|| branch.with_sources(src.into()))
    };
    let (x, y) = (pick(n.s(1), 1), pick(n.s(2), 2));
    if x.is_none() && y.is_none() {
        return None;
    }
    let x = x.unwrap_or_else(|| n.s(1).clone());
    let y = y.unwrap_or_else(|| n.s(2).clone());
    Some(c.where_(&x, &y))
}

/// WHERE rules.
pub fn select() -> PatternMatcher {
    patterns! {
        @name "select";
        // where(true, a, b) → a and where(false, a, b) → b.
        Where(@const(c), a, b) ~> if c.truthy() { a } else { b },
        // where(c, a, a) → a.
        Where(_, a, a) ~> a,
        // where(c, true, false) → c and where(c, false, true) → !c.
        Where(c, @true, @false) ~> c,
        Where(c, @false, @true) ~> c.un(Op::Not),
        // where(!c, a, b) → where(c, b, a).
        Where(Not(c), a, b) ~> c.where_(b, a),
        // where(c, where(c, a, _), b) → where(c, a, b) and
        // where(c, a, where(c, _, b)) → where(c, a, b): the inner select
        // sees c true (false).
        Where(c, Where(c, a, _), b) ~> c.where_(a, b),
        Where(c, a, Where(c, _, b)) ~> c.where_(a, b),
        // where(c, where(d, a, b), b) → where(c & d, a, b) and
        // where(c, a, where(d, a, b)) → where(c | d, a, b).
        Where(c, Where(d, a, b), b) ~> c.bin(Op::And, d).where_(a, b),
        Where(c, a, Where(d, a, b)) ~> c.bin(Op::Or, d).where_(a, b),
        // Bool-valued selects with one constant branch are logic:
        // where(c, x, false) → c & x, where(c, true, x) → c | x,
        // where(c, x, true) → !c | x, where(c, false, x) → !c & x.
        Where(c, x, @false) ~> c.bin(Op::And, x),
        Where(c, @true, x) ~> c.bin(Op::Or, x),
        Where(c, x, @true) ~> c.un(Op::Not).bin(Op::Or, x),
        Where(c, @false, x) ~> c.un(Op::Not).bin(Op::And, x),
        // where(x < y, x, y) → min(x, y) and where(x < y, y, x) → max(x, y)
        // for integers (not floats: a NaN x selects y, min would give NaN).
        Where(CmpLt(x, y), x, y) if is_int(x) ~> x.bin(Op::Min, y),
        Where(CmpLt(x, y), y, x) if is_int(x) ~> x.bin(Op::Max, y),
        // op(where(c, k1, k2), k) → where(c, op(k1, k), op(k2, k)) for a
        // binary ALU op and constants, when both folds are defined: the
        // select then usually folds away (one rule for every binary op).
        n => into_branches(n),
        // Two selects on one condition combine (see `merge_selects`).
        n => merge_selects(n),
        // A select inside a branch of a select on the same condition
        // (see `same_condition_inside`).
        n @ Where(_, _, _) => same_condition_inside(n),
    }
}
