//! Visit-order independence of [`symbolic`](super::symbolic): the
//! comparison of forms up to operand order ([`canonical`]) and the tests
//! (feature `testing`).
//!
//! [`simplify`](super::simplify) runs the rules top-down: a node is tried
//! before its operands are simplified, and again after. A rule that fires
//! on a parent whose children are not simplified yet must not hide a fold
//! the simplified children would have enabled, nor the other way round.
//! The engine re-enters every replacement from the top, so a parent-first
//! rewrite only matters when its output is not what the child-first path
//! reaches. The rules keep the two paths together this way:
//!
//! - a comparison's negation has one rewritten form (`complement` in `compare.rs`):
//!   `!(a < b)` → `b <= a`, and `<=` with a constant side becomes `<`
//!   (`x <= c` → `x < c + 1`, `c <= x` → `c - 1 < x`), so `!(x < c)`,
//!   `c <= x` and `c - 1 < x` meet and the folds of `<` apply to all;
//! - rules that would consume such a `!c` in its parent leave it to the
//!   compare rules (`where(!c, a, b)`, De Morgan, `!a ^ !b`:
//!   `absorbs_not`); `where(a <= b, x, y)` becomes `where(b < a, y, x)`,
//!   and `c & !c`, `c | !c`, `c ^ !c` are also recognized with `!c` in
//!   its rewritten form (`complementary`);
//! - `-(x + c)` → `(-c) - x`, the form `-(x - c)` reaches either way;
//! - select merges leave a select that is a `min`/`max` to be alone, and
//!   `where(c, x, y)` becomes `min`/`max` also when `c` is the rewritten
//!   form of `x < y` (the condition simplified first).
//!
//! The tests below check it: every
//! expression of the verification corpus and a set of random index
//! expressions (sums, products, `//`, `%`, comparisons, negations,
//! selects, max/min over bounded variables and ranges) is simplified in
//! three orders, and all three must give the same node up to the order
//! of commutative operands ([`canonical`]; the engine does not sort
//! them, so `a + b` and `b + a` are both fixpoints):
//!
//! - top-down ([`simplify`](super::simplify), the engine's default);
//! - bottom-up (the rules tried on a node only after its operands reached
//!   their fixpoint);
//! - operands first: each operand simplified on its own, the node rebuilt
//!   from the results, then simplified top-down.
//!
//! The result must also be a fixpoint (simplifying it again changes
//! nothing).

use crate::uop::{Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// A printed form of `n` with the operands of commutative ops sorted, so
/// forms that differ only in operand order print the same (one line; a
/// shared node is printed at each use).
pub fn canonical(n: &Arc<UOp>) -> String {
    let mut text: HashMap<u64, String> = HashMap::new();
    for u in n.toposort() {
        let mut parts: Vec<String> = u.src().iter().map(|s| text[&s.id()].clone()).collect();
        if matches!(
            u.op(),
            Op::Add
                | Op::Mul
                | Op::And
                | Op::Or
                | Op::Xor
                | Op::Max
                | Op::Min
                | Op::CmpEq
                | Op::CmpNe
        ) {
            parts.sort();
        }
        let head = match u.op() {
            Op::Const | Op::DefineVar | Op::Range | Op::DefineGlobal => {
                format!("{:?}{:?}", u.op(), u.arg())
            }
            op => format!("{op:?}"),
        };
        text.insert(u.id(), format!("{head}({})", parts.join(", ")));
    }
    text.remove(&n.id()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::canonical;
    use crate::dtype::DType;
    use crate::rewrite::graph_rewrite_bottom_up;
    use crate::symbolic::verify::{corpus, report, xorshift};
    use crate::symbolic::{simplify, symbolic};
    use crate::uop::{AxisType, Op, Srcs, UOp};
    use std::sync::Arc;

    /// Deterministic random index expressions over bounded variables and a
    /// range: the optimizer's shapes (`a*k + b`, `x // c`, `x % c`, their
    /// comparisons and negations, selects, max/min).
    fn random_index_exprs() -> Vec<Arc<UOp>> {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let var = |name: &str, min: i64, max: i64| UOp::define_var(name, DType::INDEX, min, max);
        let leaves = [
            var("oa", 0, 7),
            var("ob", 0, 3),
            var("oc", 1, 16),
            var("od", 0, 100),
            UOp::range(&UOp::index(12), 40, AxisType::Loop),
        ];
        let mut out = Vec::new();
        for _ in 0..3000 {
            let mut pool: Vec<Arc<UOp>> = leaves.to_vec();
            let mut bools: Vec<Arc<UOp>> = Vec::new();
            for _ in 0..6 {
                let a = pool[next(pool.len())].clone();
                let b = pool[next(pool.len())].clone();
                let k = UOp::index(next(12) as i64 + 1);
                let e = match next(11) {
                    0 | 1 => a.add(&b),
                    2 => a.mul(&k),
                    3 => a.bin(Op::Idiv, &k),
                    4 => a.bin(Op::Mod, &k),
                    5 => a.add(&UOp::index(next(9) as i64 - 4)),
                    6 => a.bin(Op::Max, &b),
                    7 => a.bin(Op::Min, &k),
                    8 => a.sub(&b),
                    _ => {
                        let cmp = match next(3) {
                            0 => a.bin(Op::CmpLt, &k),
                            1 => k.bin(Op::CmpLt, &a),
                            _ => a.bin(Op::CmpLt, &b),
                        };
                        let c = if next(2) == 0 { cmp.un(Op::Not) } else { cmp };
                        bools.push(c.clone());
                        c.where_(&a, &b)
                    }
                };
                pool.push(e);
            }
            out.push(pool.pop().expect("the pool is never empty"));
            if let Some(c) = bools.pop() {
                out.push(c);
            }
        }
        out
    }

    /// Simplifies `e` in the three orders of the module docs; returns a
    /// description of the first disagreement.
    fn check_orders(e: &Arc<UOp>, pm: &crate::rewrite::PatternMatcher) -> Result<(), String> {
        let top_down = simplify(e).map_err(|err| err.to_string())?;
        let bottom_up = graph_rewrite_bottom_up(pm, e, &mut ()).map_err(|err| err.to_string())?;
        let operands: Vec<Arc<UOp>> = e
            .src()
            .iter()
            .map(simplify)
            .collect::<Result<_, _>>()
            .map_err(|err| err.to_string())?;
        let operands_first =
            simplify(&e.with_sources(Srcs::from_vec(operands))).map_err(|err| err.to_string())?;
        let again = simplify(&top_down).map_err(|err| err.to_string())?;
        let differs = |name: &str, other: &Arc<UOp>| {
            format!(
                "{name} differs from top-down\ninput:\n{}top-down:\n{}{name}:\n{}",
                e.tree(),
                top_down.tree(),
                other.tree()
            )
        };
        let form = canonical(&top_down);
        if canonical(&bottom_up) != form {
            return Err(differs("bottom-up", &bottom_up));
        }
        if canonical(&operands_first) != form {
            return Err(differs("operands-first", &operands_first));
        }
        if !Arc::ptr_eq(&again, &top_down) {
            return Err(differs("simplified again", &again));
        }
        Ok(())
    }

    fn check_all(name: &str, exprs: &[Arc<UOp>]) {
        let pm = symbolic();
        let failures: Vec<String> = exprs
            .iter()
            .filter_map(|e| check_orders(e, &pm).err())
            .collect();
        report(&format!(
            "symbolic order: {} {name} expressions, the same form in 3 visit orders",
            exprs.len()
        ));
        assert!(
            failures.is_empty(),
            "{} of {} expressions depend on the visit order; first:\n{}",
            failures.len(),
            exprs.len(),
            failures[..failures.len().min(3)].join("\n\n")
        );
    }

    #[test]
    fn corpus_simplifies_to_one_form_in_every_order() {
        let (_vars, exprs) = corpus();
        check_all("corpus", &exprs);
    }

    #[test]
    fn random_index_expressions_simplify_to_one_form_in_every_order() {
        check_all("random index", &random_index_exprs());
    }
}
