//! Index simplification under the index's own gate.
//!
//! A gated access `INDEX(buf, idx, gate)` reads or writes only where
//! `gate` holds, so `idx` only has to be right there. When the gate bounds
//! a loop counter more tightly than its loop does (`r < 5` on a loop of
//! 10, as `cat` and `pad` produce), divisions and remainders in `idx` that
//! do not fold over the whole loop may fold over the gated part: with
//! `r ≤ 4`, `(4r + 3 − k) // 20` is 0. The same holds for any integer
//! node the gate compares with a constant: a windowed read (the backward
//! of `cumsum` along a leading axis) is gated by `y % 6 < 3`, and its
//! index, built as `(3·(y // 18) + y % 6) % 3` and
//! `(3·(y // 18) + y % 6) // 3`, folds to `y % 6` and `y // 18` with
//! `y % 6` in `[0, 2]`.
//!
//! Each conjunct of the gate that compares an integer node `x` with a
//! constant (the shared [`clauses`] walk) confines `x` to an interval
//! wherever the gate holds; conjuncts of other forms are ignored (the
//! gate still implies the ones used). The rule replaces each such node in
//! `idx` by a variable with the narrowed bounds, simplifies, and puts the
//! nodes back. The simplified index equals the old one for every value of
//! the variables within their bounds, whatever the other nodes are, and
//! wherever the gate holds the nodes take such values, so there the new
//! index is the old one. Where the gate is false the new index may differ
//! from the old one, which is harmless: the access does not happen. The
//! result is taken only when every division and remainder folded away
//! except inside the gate's nodes (an index linear in the counters and in
//! nodes the gate bounds, which the buffer-access analysis bounds under
//! the gate; a partly folded one can bound worse than the original), when
//! its interval under the narrowed nodes lies within the original's (a
//! remainder bounds its index by itself, while the gate condition that
//! keeps the linear form in range may not be linear), and when it has
//! fewer nodes, so the rewrite cannot cycle with the ungated rules.

use super::index_simplify::index_rules;
use crate::patterns;
use crate::rewrite::{graph_rewrite, PatternMatcher, RewriteError};
use crate::symbolic::bounds::int_bounds;
use crate::symbolic::gate::clauses;
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The gated-index rule set.
pub fn gated_index_rules() -> PatternMatcher {
    patterns! {
        @name "gated-index";
        n @ Index(..) => try simplify_under_gate(n),
    }
}

/// The ungated index simplifier used under a gate.
fn simplifier() -> &'static PatternMatcher {
    static RULES: OnceLock<PatternMatcher> = OnceLock::new();
    RULES.get_or_init(|| crate::symbolic::symbolic().combined(&index_rules(), "gated-index"))
}

/// Gate-bounded nodes by id, with the `[lo, hi]` a gate confines them to.
type Narrowed = HashMap<u64, (Arc<UOp>, i128, i128)>;

/// Bounds the gate's conjuncts put on integer nodes: `x < c`, `c < x`,
/// `x <= c`, `c <= x` and their negations (the shared [`clauses`] walk)
/// with `c` a constant, intersected with the node's own interval. Nodes
/// the gate does not narrow are left out, and so are conjuncts of other
/// forms: wherever the gate holds, every node lies in its interval.
fn narrowed_nodes(gate: &Arc<UOp>) -> Narrowed {
    let mut out: Narrowed = HashMap::new();
    for clause in &clauses(gate).0 {
        let Some((x, lo, hi)) = clause.bound() else {
            continue;
        };
        let Some((xlo, xhi)) = int_bounds(x) else {
            continue;
        };
        let e = out.entry(x.id()).or_insert((x.clone(), xlo, xhi));
        e.1 = e.1.max(lo);
        e.2 = e.2.min(hi);
    }
    out.retain(|_, (x, lo, hi)| {
        lo <= hi && int_bounds(x).is_some_and(|(xlo, xhi)| (*lo, *hi) != (xlo, xhi))
    });
    out
}

/// True if `n` computes a division or remainder.
fn has_divmod(n: &Arc<UOp>) -> bool {
    n.toposort()
        .iter()
        .any(|u| matches!(u.op(), Op::Idiv | Op::Mod))
}

/// `INDEX(buf, idx…, gate)` with every `idx` simplified where `gate`
/// holds (see the module docs), where that makes it linear in the
/// counters and the gate's bounded nodes. Fails if the
/// simplification under the gate fails (does not converge).
fn simplify_under_gate(n: &Arc<UOp>) -> Result<Option<Arc<UOp>>, RewriteError> {
    let Some((gate, rest)) = n.src().split_last() else {
        return Ok(None);
    };
    if !gate.dtype().is_bool() || rest.len() < 2 {
        return Ok(None);
    }
    let narrowed = narrowed_nodes(gate);
    if narrowed.is_empty() {
        return Ok(None);
    }
    let mut to_var = HashMap::new();
    let mut back = HashMap::new();
    for (id, (x, lo, hi)) in narrowed {
        // A node bound beyond i64 cannot be a variable: decline.
        let (Ok(min), Ok(max)) = (i64::try_from(lo), i64::try_from(hi)) else {
            return Ok(None);
        };
        let var = UOp::new(
            Op::DefineVar,
            x.dtype(),
            Srcs::new(),
            Arg::Var {
                name: format!("gated node {id}"),
                min,
                max,
            },
        );
        back.insert(var.id(), x);
        to_var.insert(id, var);
    }
    let mut srcs: Srcs = Srcs::new();
    srcs.push(rest[0].clone());
    let mut smaller = false;
    for idx in &rest[1..] {
        if !has_divmod(idx) {
            srcs.push(idx.clone());
            continue;
        }
        let narrowed = idx.substitute(&to_var);
        // No gate node in this index: the ungated rules see the same.
        if Arc::ptr_eq(&narrowed, idx) {
            srcs.push(idx.clone());
            continue;
        }
        let under_gate = graph_rewrite(simplifier(), &narrowed, &mut ())?;
        let new = under_gate.substitute(&back);
        let within = match (int_bounds(&under_gate), int_bounds(&narrowed)) {
            (Some((nlo, nhi)), Some((olo, ohi))) => olo <= nlo && nhi <= ohi,
            _ => false,
        };
        // Divisions left inside the gate's nodes are bounded by the gate.
        if within && !has_divmod(&under_gate) && new.toposort().len() < idx.toposort().len() {
            smaller = true;
            srcs.push(new);
        } else {
            srcs.push(idx.clone());
        }
    }
    srcs.push(gate.clone());
    Ok(smaller.then(|| n.with_sources(srcs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;

    fn range(end: i64, axis: usize) -> Arc<UOp> {
        UOp::range(&UOp::index(end), axis, AxisType::Loop)
    }

    #[test]
    fn a_gate_narrows_the_nodes_it_compares_with_constants() {
        let (r, k) = (range(10, 0), range(4, 1));
        let below = r.bin(Op::CmpLt, &UOp::index(5));
        let above = UOp::index(1).bin(Op::CmpLt, &k);
        let boxed = narrowed_nodes(&below.bin(Op::And, &above));
        assert_eq!((boxed[&r.id()].1, boxed[&r.id()].2), (0, 4));
        assert_eq!((boxed[&k.id()].1, boxed[&k.id()].2), (2, 3));
        let not_below = below.un(Op::Not);
        let flipped = narrowed_nodes(&not_below);
        assert_eq!((flipped[&r.id()].1, flipped[&r.id()].2), (5, 9));
        // Any integer node compared with a constant is narrowed; a
        // comparison of two nodes is ignored.
        let y = r.add(&k.mul(&UOp::index(5)));
        let phase = y.bin(Op::Mod, &UOp::index(6));
        let window = phase.bin(Op::CmpLt, &UOp::index(3));
        let pair = r.bin(Op::CmpLt, &k);
        let gate = below.bin(Op::And, &window).bin(Op::And, &pair);
        let nodes = narrowed_nodes(&gate);
        assert_eq!(nodes.len(), 2);
        assert_eq!((nodes[&phase.id()].1, nodes[&phase.id()].2), (0, 2));
    }

    /// Random indices of three counters with divisions and remainders by
    /// constants, gated by comparisons of their own subexpressions (and
    /// counters) with constants: wherever the rule fires, the new index
    /// equals the old one at every point where the gate holds, and is
    /// free of divisions outside the gate's nodes.
    #[test]
    fn indices_simplified_under_random_gates_keep_their_values_where_the_gate_holds() {
        use crate::symbolic::interp::evaluate;
        use crate::uop::ConstValue;
        let rs = [range(6, 0), range(4, 1), range(5, 2)];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut fired, mut through_nodes) = (0, 0);
        for _ in 0..3000 {
            let mut pool: Vec<Arc<UOp>> = rs.to_vec();
            for _ in 0..5 {
                let a = pool[next(pool.len())].clone();
                let b = pool[next(pool.len())].clone();
                let c = UOp::index(2 + next(5) as i64);
                pool.push(match next(5) {
                    0 => a.add(&b),
                    1 => a.mul(&c).add(&b),
                    2 => a.bin(Op::Idiv, &c),
                    3 => a.bin(Op::Mod, &c),
                    _ => a.add(&UOp::index(next(7) as i64)),
                });
            }
            let idx = pool.pop().expect("the pool is never empty");
            let nodes: Vec<Arc<UOp>> = idx
                .toposort()
                .into_iter()
                .filter(|n| n.const_int().is_none())
                .collect();
            let mut clause = || {
                let x = nodes[next(nodes.len())].clone();
                let c = UOp::index(next(8) as i64);
                match next(3) {
                    0 => x.bin(Op::CmpLt, &c),
                    1 => c.bin(Op::CmpLt, &x),
                    _ => x.bin(Op::CmpLt, &c).un(Op::Not),
                }
            };
            let gate = clause().bin(Op::And, &clause());
            let n = UOp::define_global(1, crate::DType::F32).index_into(&idx, Some(&gate));
            let Some(new) = simplify_under_gate(&n).unwrap() else {
                continue;
            };
            fired += 1;
            let new_idx = new.s(1);
            let narrowed = narrowed_nodes(&gate);
            let inside = new_idx.toposort().into_iter().filter(|m| {
                matches!(m.op(), Op::Idiv | Op::Mod)
                    && !narrowed
                        .values()
                        .any(|(x, _, _)| super::super::depends_on(x, m))
            });
            assert_eq!(inside.count(), 0, "{new_idx:?}");
            // Firings that keep a gate node other than a counter: the
            // index is linear in nodes the gate bounds.
            let kept = narrowed
                .values()
                .any(|(x, _, _)| x.op() != Op::Range && super::super::depends_on(new_idx, x));
            through_nodes += usize::from(kept);
            for v0 in 0..6 {
                for v1 in 0..4 {
                    for v2 in 0..5 {
                        let leaves: HashMap<u64, ConstValue> = rs
                            .iter()
                            .zip([v0, v1, v2])
                            .map(|(r, v)| (r.id(), ConstValue::Int(v)))
                            .collect();
                        let at = |e: &Arc<UOp>| evaluate(e, &leaves).unwrap()[0];
                        if at(&gate).truthy() {
                            assert_eq!(at(&idx), at(new_idx), "{idx:?} under {gate:?}");
                        }
                    }
                }
            }
        }
        assert!(fired >= 100, "the rule fired {fired} times");
        assert!(through_nodes >= 20, "{through_nodes} kept a gate node");
    }
}
