//! WHERE folding: constant and negated conditions, equal branches, nested
//! selects on related conditions, bool-valued selects as logic, min/max
//! recognition, and pushing constant operations into constant branches.

use super::compare::absorbs_not;
use super::eval::exec_alu;
use super::{compute_dtype, is_int, is_int_or_bool};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use std::sync::{Arc, OnceLock};

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

/// True if select `n` picks between the operands of its own comparison
/// (`where(a < b, a, b)`, `where(!(b <= a), b, a)`, ...): an integer
/// `min` or `max` once its condition is rewritten. The rules that merge a
/// select with another leave such a select alone, so that the `min`/`max`
/// fold, which its rewritten condition may enable later, is not hidden.
fn picks_between_its_operands(n: &Arc<UOp>) -> bool {
    if n.op() != Op::Where || !is_int(n) {
        return false;
    }
    let c = if n.s(0).op() == Op::Not {
        n.s(0).s(0)
    } else {
        n.s(0)
    };
    let same = |p: &Arc<UOp>, q: &Arc<UOp>| Arc::ptr_eq(p, q);
    matches!(c.op(), Op::CmpLt | Op::CmpLe)
        && ((same(c.s(0), n.s(1)) && same(c.s(1), n.s(2)))
            || (same(c.s(0), n.s(2)) && same(c.s(1), n.s(1))))
}

/// `c` rewritten at its root only by the comparison rules, a few steps:
/// the form the simplifier gives a comparison whose operands are already
/// simplified (no walk of the operands).
fn comparison_form(c: Arc<UOp>) -> Arc<UOp> {
    static PM: OnceLock<PatternMatcher> = OnceLock::new();
    let pm = PM.get_or_init(|| {
        let mut pm = super::compare::compare();
        pm.extend(&super::terms::terms());
        pm
    });
    let mut c = c;
    for _ in 0..4 {
        match pm.rewrite(&c, &mut ()) {
            Ok(Some(next)) => c = next,
            _ => break,
        }
    }
    c
}

/// `where(c, x, y)` → `min(x, y)` when `c` is the rewritten form of
/// `x < y`, → `max(x, y)` when it is that of `y < x` (integers): the
/// select of [`select`]'s `min`/`max` rule after its condition was
/// simplified first (`where(2·r < 2, 2·r, 2)` has the condition `r < 1`
/// when the comparison is rewritten before the select).
fn min_max_of_rewritten(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let (c, x, y) = (n.s(0), n.s(1), n.s(2));
    if !is_int(x) || !matches!(c.op(), Op::CmpLt | Op::CmpLe) || picks_between_its_operands(n) {
        return None;
    }
    if Arc::ptr_eq(&comparison_form(x.bin(Op::CmpLt, y)), c) {
        Some(x.bin(Op::Min, y))
    } else if Arc::ptr_eq(&comparison_form(y.bin(Op::CmpLt, x)), c) {
        Some(x.bin(Op::Max, y))
    } else {
        None
    }
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
        // where(!c, a, b) → where(c, b, a), unless c is a comparison whose
        // negation the compare rules rewrite (`absorbs_not`): the `NOT`
        // may be rewritten first, and the result must not differ.
        Where(Not(c), a, b) if !absorbs_not(c) ~> c.where_(b, a),
        // where(a <= b, x, y) → where(b < a, y, x) for integers and bools
        // (`!(b < a)` is `a <= b`): selects test `<`, so `where(!(b < a),
        // ..)` and `where(b < a, ..)` meet. Constant sides are left to the
        // compare rules, which make `<=` a `<` there.
        Where(CmpLe(a, b), x, y)
            if is_int_or_bool(a) && a.const_value().is_none() && b.const_value().is_none()
            ~> b.bin(Op::CmpLt, a).where_(y, x),
        // where(c, where(c, a, _), b) → where(c, a, b) and
        // where(c, a, where(c, _, b)) → where(c, a, b): the inner select
        // sees c true (false).
        Where(c, Where(c, a, _), b) ~> c.where_(a, b),
        Where(c, a, Where(c, _, b)) ~> c.where_(a, b),
        // where(c, where(d, a, b), b) → where(c & d, a, b) and
        // where(c, a, where(d, a, b)) → where(c | d, a, b), unless a select
        // is a min/max to be (see `picks_between_its_operands`).
        n @ Where(c, i @ Where(d, a, b), b)
            if !picks_between_its_operands(n) && !picks_between_its_operands(i)
            ~> c.bin(Op::And, d).where_(a, b),
        n @ Where(c, a, i @ Where(d, a, b))
            if !picks_between_its_operands(n) && !picks_between_its_operands(i)
            ~> c.bin(Op::Or, d).where_(a, b),
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
        // The same with the condition rewritten (see `min_max_of_rewritten`).
        n @ Where(_, _, _) => min_max_of_rewritten(n),
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
