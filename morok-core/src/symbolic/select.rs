//! WHERE folding: constant and negated conditions, equal branches, nested
//! selects on related conditions, bool-valued selects as logic, min/max
//! recognition, and pushing constant operations into constant branches.

use super::eval::exec_alu;
use super::{compute_dtype, is_int, same};
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use std::sync::Arc;

/// The truth value of a bool CONST.
fn truth(n: &Arc<UOp>) -> Option<bool> {
    match n.const_value()? {
        ConstValue::Bool(b) => Some(b),
        _ => None,
    }
}

/// WHERE rules.
pub fn select() -> PatternMatcher {
    let mut pm = PatternMatcher::new("select");

    // where(true, a, b) → a and where(false, a, b) → b.
    pm.rule(&[Op::Where], |n, _| {
        let c = n.s(0).const_value()?;
        Some(if c.truthy() { n.s(1) } else { n.s(2) }.clone())
    });
    // where(c, a, a) → a.
    pm.rule(&[Op::Where], |n, _| same(n.s(1), n.s(2)).then(|| n.s(1).clone()));
    // where(c, true, false) → c and where(c, false, true) → !c.
    pm.rule(&[Op::Where], |n, _| match (truth(n.s(1))?, truth(n.s(2))?) {
        (true, false) => Some(n.s(0).clone()),
        (false, true) => Some(n.s(0).un(Op::Not)),
        _ => None,
    });
    // where(!c, a, b) → where(c, b, a).
    pm.rule(&[Op::Where], |n, _| {
        let c = n.s(0);
        (c.op() == Op::Not).then(|| c.s(0).where_(n.s(2), n.s(1)))
    });
    // where(c, where(c, a, _), b) → where(c, a, b): the inner select sees c true.
    pm.rule(&[Op::Where], |n, _| {
        let (c, t) = (n.s(0), n.s(1));
        (t.op() == Op::Where && same(t.s(0), c)).then(|| c.where_(t.s(1), n.s(2)))
    });
    // where(c, a, where(c, _, b)) → where(c, a, b): the inner select sees c false.
    pm.rule(&[Op::Where], |n, _| {
        let (c, f) = (n.s(0), n.s(2));
        (f.op() == Op::Where && same(f.s(0), c)).then(|| c.where_(n.s(1), f.s(2)))
    });
    // where(c, where(d, a, b), b) → where(c & d, a, b).
    pm.rule(&[Op::Where], |n, _| {
        let (c, t, b) = (n.s(0), n.s(1), n.s(2));
        (t.op() == Op::Where && same(t.s(2), b))
            .then(|| c.bin(Op::And, t.s(0)).where_(t.s(1), b))
    });
    // where(c, a, where(d, a, b)) → where(c | d, a, b).
    pm.rule(&[Op::Where], |n, _| {
        let (c, a, f) = (n.s(0), n.s(1), n.s(2));
        (f.op() == Op::Where && same(f.s(1), a))
            .then(|| c.bin(Op::Or, f.s(0)).where_(a, f.s(2)))
    });
    // Bool-valued selects with one constant branch are logic:
    // where(c, x, false) → c & x, where(c, true, x) → c | x,
    // where(c, x, true) → !c | x, where(c, false, x) → !c & x.
    pm.rule(&[Op::Where], |n, _| {
        let (c, x) = (n.s(0), n.s(1));
        (truth(n.s(2))? == false && n.dtype().is_bool()).then(|| c.bin(Op::And, x))
    });
    pm.rule(&[Op::Where], |n, _| {
        let (c, x) = (n.s(0), n.s(2));
        (truth(n.s(1))? && n.dtype().is_bool()).then(|| c.bin(Op::Or, x))
    });
    pm.rule(&[Op::Where], |n, _| {
        let (c, x) = (n.s(0), n.s(1));
        (truth(n.s(2))? && n.dtype().is_bool()).then(|| c.un(Op::Not).bin(Op::Or, x))
    });
    pm.rule(&[Op::Where], |n, _| {
        let (c, x) = (n.s(0), n.s(2));
        (!truth(n.s(1))? && n.dtype().is_bool()).then(|| c.un(Op::Not).bin(Op::And, x))
    });
    // where(x < y, x, y) → min(x, y) and where(x < y, y, x) → max(x, y) for
    // integers (not floats: a NaN x selects y, min would give NaN).
    pm.rule(&[Op::Where], |n, _| {
        let (c, a, b) = (n.s(0), n.s(1), n.s(2));
        if c.op() != Op::CmpLt || !is_int(a) {
            return None;
        }
        if same(c.s(0), a) && same(c.s(1), b) {
            Some(a.bin(Op::Min, b))
        } else if same(c.s(0), b) && same(c.s(1), a) {
            Some(a.bin(Op::Max, b))
        } else {
            None
        }
    });
    // op(where(c, k1, k2), k3) → where(c, op(k1, k3), op(k2, k3)) for a
    // binary ALU op and constants (either operand order), when both folds
    // are defined: the select then usually folds away.
    pm.rule(&[], |n, _| {
        if n.op().group() != OpGroup::Binary || n.op() == Op::Threefry {
            return None;
        }
        let dtype = compute_dtype(n);
        for (w, k, w_first) in [(n.s(0), n.s(1), true), (n.s(1), n.s(0), false)] {
            let Some(kv) = k.const_value() else { continue };
            if w.op() != Op::Where {
                continue;
            }
            let (Some(a), Some(b)) = (w.s(1).const_value(), w.s(2).const_value()) else {
                continue;
            };
            let eval = |v: ConstValue| {
                let args = if w_first { [v, kv] } else { [kv, v] };
                exec_alu(n.op(), dtype, &args).map(|r| UOp::const_(n.dtype(), r))
            };
            if let (Some(x), Some(y)) = (eval(a), eval(b)) {
                return Some(w.s(0).where_(&x, &y));
            }
        }
        None
    });

    pm
}
