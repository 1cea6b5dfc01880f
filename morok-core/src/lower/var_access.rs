//! Access ranges as expressions of the kernel's variables.
//!
//! [`BufferSlot::access`](super::BufferSlot::access) holds for every value
//! the kernel's `DEFINE_VAR`s may take. A launch sizes its buffers for the
//! values it passes, which are usually smaller, so its bounds check needs
//! the range at those values. Lowering builds that range here, once, as
//! two `Index` expressions over the `DEFINE_VAR`s ([`AccessForm`]); a
//! launch only evaluates them ([`AccessForm::at`]), with no analysis at
//! run time.
//!
//! The form of one access comes from the linear form the interval
//! evaluator ([`Bounds`]) keeps for its index, `c + Σ k·a`, with an
//! interval expression per atom `a`:
//!
//! - a node that depends on no variable keeps its proven interval;
//! - a `DEFINE_VAR` is its own value;
//! - a `RANGE` is `[0, end − 1]`, narrowed by the gate's constant bounds
//!   on it (the evaluator's override) and by gate clauses that compare it
//!   with an expression of the variables (`r < n` gives `r ≤ n − 1`);
//! - sums, differences, min and max combine their operands' intervals;
//!   products, quotients and remainders do when their operands are proven
//!   non-negative (then they are monotone: `b·t` for `b < B`, `t < T` is
//!   at most `(B − 1)·(T − 1)`);
//! - any other node that depends on a variable has no form, and neither
//!   has the slot: its launches are checked against the static range.
//!
//! Every form is also clamped to the node's proven interval, which holds
//! for every value too. Summing `k·[lo, hi]` term by term is sound for
//! every assignment of the variables within their declared ranges (it
//! forgets only correlations between atoms). A range whose interval is empty at the launch's values
//! is a loop that does not run, and so is the access inside it: the form
//! then gives an empty range.

use super::bounds::Bounds;
use crate::symbolic::gate::clauses;
use crate::symbolic::interp::Program as Evaluator;
use crate::uop::{ConstValue, Op, OpGroup, UOp};
use crate::DType;
use std::collections::HashMap;
use std::sync::Arc;

/// The element range one buffer slot may touch, as `Index` expressions of
/// the kernel's `DEFINE_VAR`s: `lo ..= hi` (empty when `lo > hi`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessForm {
    /// The lowest element index.
    pub lo: Arc<UOp>,
    /// The highest element index.
    pub hi: Arc<UOp>,
}

/// The largest magnitude an access bound may take (an empty access is
/// `[EMPTY, −EMPTY]`, which every union with a real access ignores).
const EMPTY: i64 = i64::MAX / 4;

/// The largest magnitude of a coefficient or a proven bound a form is
/// built from: products of two such stay far inside `i64` (the
/// evaluator's `Index`), so the form never wraps.
const LARGEST: i128 = 1 << 40;

impl AccessForm {
    /// The range at the variables' values (`value(name)`), or `None` when
    /// the access is empty (its loop does not run) or a variable has no
    /// value.
    pub fn at(&self, value: &dyn Fn(&str) -> Option<i64>) -> Option<(i64, i64)> {
        let eval = |root: &Arc<UOp>| -> Option<i64> {
            let program = Evaluator::new(root);
            let mut leaves = HashMap::new();
            for n in program.nodes() {
                if let (Op::DefineVar, crate::Arg::Var { name, .. }) = (n.op(), n.arg()) {
                    leaves.insert(n.id(), ConstValue::Int(value(name.as_str())?));
                }
            }
            match *program.run(&leaves)?.first()? {
                ConstValue::Int(v) => Some(v),
                _ => None,
            }
        };
        let (lo, hi) = (eval(&self.lo)?, eval(&self.hi)?);
        (lo <= hi).then_some((lo, hi))
    }

    /// The union of two forms (the slot's accesses together).
    pub(super) fn union(&self, other: &AccessForm) -> AccessForm {
        AccessForm {
            lo: self.lo.bin(Op::Min, &other.lo),
            hi: self.hi.bin(Op::Max, &other.hi),
        }
    }
}

/// True if `n` is computed from `DEFINE_VAR`s and constants only.
fn of_variables(n: &Arc<UOp>) -> bool {
    n.toposort().iter().all(|m| {
        matches!(m.op(), Op::DefineVar | Op::Const | Op::Cast)
            || matches!(
                m.op().group(),
                OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
            )
    })
}

/// True if `n` depends on a `DEFINE_VAR`.
fn uses_variable(n: &Arc<UOp>) -> bool {
    n.toposort().iter().any(|m| m.op() == Op::DefineVar)
}

/// `n` as an `Index` expression.
fn as_index(n: &Arc<UOp>) -> Arc<UOp> {
    if n.dtype() == DType::INDEX {
        n.clone()
    } else {
        n.cast(DType::INDEX)
    }
}

/// An `Index` constant, clamped into `[−EMPTY, EMPTY]`.
fn konst(v: i128) -> Arc<UOp> {
    UOp::index(v.clamp(-(EMPTY as i128), EMPTY as i128) as i64)
}

/// The bounds a gate's clauses put on `RANGE`s through expressions of the
/// variables, by range id: `(lower bounds, upper bounds)`.
type RangeLimits = HashMap<u64, (Vec<Arc<UOp>>, Vec<Arc<UOp>>)>;

/// Clauses `r − x ∈ [lo, hi]` (or `x − r`) with `r` a `RANGE` and `x` an
/// expression of the variables: `r ∈ [x + lo, x + hi]` (resp.
/// `[x − hi, x − lo]`), open ends dropped.
fn gate_limits(gate: Option<&Arc<UOp>>) -> RangeLimits {
    let mut out = RangeLimits::new();
    let Some(gate) = gate else {
        return out;
    };
    for c in clauses(gate).0 {
        let (lo, hi) = c.difference();
        let (r, x, lo, hi) = match (c.lhs.op(), c.rhs.op()) {
            (Op::Range, _) if uses_variable(&c.rhs) && of_variables(&c.rhs) => {
                (&c.lhs, &c.rhs, lo, hi)
            }
            (_, Op::Range) if uses_variable(&c.lhs) && of_variables(&c.lhs) => (
                &c.rhs,
                &c.lhs,
                hi.checked_neg().unwrap_or(i128::MAX),
                lo.checked_neg().unwrap_or(i128::MAX),
            ),
            _ => continue,
        };
        let e = out.entry(r.id()).or_default();
        let x = as_index(x);
        if lo > i128::MIN / 2 && lo < i128::MAX / 2 {
            e.0.push(x.add(&konst(lo)));
        }
        if hi > i128::MIN / 2 && hi < i128::MAX / 2 {
            e.1.push(x.add(&konst(hi)));
        }
    }
    out
}

/// Interval expressions `(lo, hi)` of the nodes of an atom.
type Forms = HashMap<u64, (Arc<UOp>, Arc<UOp>)>;

/// What the forms of one access are built from: the evaluator that
/// bounded the index, the gate's limits on ranges, and the ranges met so
/// far with their interval expressions (the access happens only when
/// each is non-empty).
struct Builder<'a> {
    bounds: &'a Bounds,
    limits: RangeLimits,
    forms: Forms,
    ranges: Vec<(Arc<UOp>, Arc<UOp>)>,
}

impl Builder<'_> {
    /// The proven interval of node `n` when it is small enough to build
    /// forms from (see [`LARGEST`]).
    fn proven(&self, n: &Arc<UOp>) -> Option<(i128, i128)> {
        self.bounds
            .interval(n.id())
            .filter(|(l, h)| l.abs() <= LARGEST && h.abs() <= LARGEST)
    }

    /// The interval expressions of `root`, from its operands' (nodes are
    /// visited operands first, so no recursion). Each node's form is
    /// clamped to its proven interval, which holds too and keeps every
    /// value small. `None` when some node has no rule here.
    fn interval(&mut self, root: &Arc<UOp>) -> Option<(Arc<UOp>, Arc<UOp>)> {
        for n in root.toposort() {
            if self.forms.contains_key(&n.id()) {
                continue;
            }
            let proven = self.proven(&n)?;
            let (lo, hi) = self.node(&n, proven)?;
            let lo = lo.bin(Op::Max, &konst(proven.0));
            let hi = hi.bin(Op::Min, &konst(proven.1));
            self.forms.insert(n.id(), (lo, hi));
        }
        self.forms.get(&root.id()).cloned()
    }

    /// The interval rule of one node whose operands have forms.
    fn node(&mut self, n: &Arc<UOp>, proven: (i128, i128)) -> Option<(Arc<UOp>, Arc<UOp>)> {
        if !uses_variable(n) && n.op() != Op::Range {
            return Some((konst(proven.0), konst(proven.1)));
        }
        let f = |i: usize| self.forms.get(&n.s(i).id()).cloned();
        let nonneg = |i: usize| self.proven(n.s(i)).is_some_and(|(l, _)| l >= 0);
        let positive = |i: usize| self.proven(n.s(i)).is_some_and(|(l, _)| l >= 1);
        Some(match n.op() {
            Op::DefineVar => (as_index(n), as_index(n)),
            Op::Range => {
                let mut lo = konst(0);
                let mut hi = f(0)?.1.add(&konst(-1));
                let narrowing = self.bounds.override_of(n.id());
                if let Some((o_lo, o_hi)) =
                    narrowing.filter(|(l, h)| l.abs() <= LARGEST && h.abs() <= LARGEST)
                {
                    lo = lo.bin(Op::Max, &konst(o_lo));
                    hi = hi.bin(Op::Min, &konst(o_hi));
                }
                if let Some((lower, upper)) = self.limits.get(&n.id()) {
                    for l in lower {
                        lo = lo.bin(Op::Max, l);
                    }
                    for u in upper {
                        hi = hi.bin(Op::Min, u);
                    }
                }
                self.ranges.push((lo.clone(), hi.clone()));
                (lo, hi)
            }
            Op::Cast if n.s(0).dtype().is_int() => f(0)?,
            Op::Add => {
                let (a, b) = (f(0)?, f(1)?);
                (a.0.add(&b.0), a.1.add(&b.1))
            }
            Op::Sub => {
                let (a, b) = (f(0)?, f(1)?);
                (a.0.sub(&b.1), a.1.sub(&b.0))
            }
            Op::Max | Op::Min => {
                let (a, b) = (f(0)?, f(1)?);
                (a.0.bin(n.op(), &b.0), a.1.bin(n.op(), &b.1))
            }
            // Products and quotients of non-negative values are monotone
            // in each operand.
            Op::Mul if nonneg(0) && nonneg(1) => {
                let (a, b) = (f(0)?, f(1)?);
                (a.0.mul(&b.0), a.1.mul(&b.1))
            }
            Op::Idiv if nonneg(0) && positive(1) => {
                let (a, b) = (f(0)?, f(1)?);
                (a.0.bin(Op::Idiv, &b.1), a.1.bin(Op::Idiv, &b.0))
            }
            // A remainder of non-negative values is below the divisor and
            // at most the dividend.
            Op::Mod if nonneg(0) && positive(1) => {
                let (a, b) = (f(0)?, f(1)?);
                (konst(0), a.1.bin(Op::Min, &b.1.add(&konst(-1))))
            }
            _ => return None,
        })
    }
}

/// The form of one access at index `idx` under `gate`, from the
/// evaluator that bounded it (`bounds.of(idx)` was called), intersected
/// with the proven `range` (which holds for all values). `None` when a
/// node of the index depends on a variable in a way the form cannot
/// follow (see the module docs).
pub(super) fn access_form(
    idx: &Arc<UOp>,
    gate: Option<&Arc<UOp>>,
    bounds: &Bounds,
    range: (i128, i128),
) -> Option<AccessForm> {
    let form = bounds.linear(idx)?;
    let mut b = Builder {
        bounds,
        limits: gate_limits(gate),
        forms: Forms::new(),
        ranges: Vec::new(),
    };
    let mut lo = konst(form.constant);
    let mut hi = konst(form.constant);
    for (atom, k) in &form.terms {
        let (a_lo, a_hi) = b.interval(atom)?;
        let (p_lo, p_hi) = b.proven(atom)?;
        // |k·atom| stays within i64 (the evaluator's `Index`).
        if k.abs().saturating_mul(p_lo.abs().max(p_hi.abs())) > LARGEST << 16 {
            return None;
        }
        let k_node = konst(*k);
        let (t_lo, t_hi) = if *k >= 0 {
            (a_lo.mul(&k_node), a_hi.mul(&k_node))
        } else {
            (a_hi.mul(&k_node), a_lo.mul(&k_node))
        };
        lo = lo.add(&t_lo);
        hi = hi.add(&t_hi);
    }
    if form.constant.abs() > LARGEST {
        return None;
    }
    lo = lo.bin(Op::Max, &konst(range.0));
    hi = hi.bin(Op::Min, &konst(range.1));
    let runs = b
        .ranges
        .iter()
        .map(|(l, h)| l.bin(Op::CmpLe, h))
        .reduce(|a, c| a.bin(Op::And, &c));
    if let Some(runs) = runs {
        lo = runs.where_(&lo, &konst(EMPTY as i128));
        hi = runs.where_(&hi, &konst(-(EMPTY as i128)));
    }
    Some(AccessForm { lo, hi })
}

#[cfg(test)]
mod tests {
    use super::super::slots::buffer_slots;
    use super::super::BufferSlot;
    use crate::symbolic::interp::evaluate;
    use crate::uop::{AxisType, ConstValue, UOp};
    use crate::DType;
    use std::collections::HashMap;
    use std::sync::Arc;

    fn var(name: &str, min: i64, max: i64) -> Arc<UOp> {
        UOp::define_var(name, DType::INDEX, min, max)
    }

    /// `out[0] = x[idx]` (the load under `gate`) inside loops `ranges`.
    fn kernel(idx: &Arc<UOp>, gate: Option<&Arc<UOp>>, ranges: &[Arc<UOp>]) -> Vec<BufferSlot> {
        let x = UOp::define_global(1, DType::F32)
            .index_into(idx, gate)
            .load();
        let st = UOp::define_global(0, DType::F32)
            .index_into(&UOp::index(0), None)
            .store(&x);
        let ast = UOp::sink(vec![st.end(ranges)]);
        buffer_slots(&ast, &ast).unwrap()
    }

    fn at(slot: &BufferSlot, values: &[(&str, i64)]) -> Option<(i64, i64)> {
        let form = slot.access_form.as_ref().expect("a form");
        form.at(&|name| values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
    }

    #[test]
    fn two_symbolic_dims_give_their_product() {
        // x[b·T + t] for b < B, t < T.
        let (bv, tv) = (var("B", 0, 64), var("T", 1, 64));
        let b = UOp::range(&bv, 0, AxisType::Loop);
        let t = UOp::range(&tv, 1, AxisType::Loop);
        let slots = kernel(&b.mul(&tv).add(&t), None, &[b, t]);
        assert_eq!(slots[1].access, Some((0, 64 * 64 - 1)));
        for (bn, tn) in [(1, 1), (3, 5), (64, 64), (7, 1)] {
            assert_eq!(
                at(&slots[1], &[("B", bn), ("T", tn)]),
                Some((0, bn * tn - 1))
            );
        }
        // B = 0: the loop does not run, nothing is touched.
        assert_eq!(at(&slots[1], &[("B", 0), ("T", 9)]), None);
    }

    #[test]
    fn a_gate_bounded_by_a_variable_narrows_the_range() {
        // A pad of one on each side: x[i − 1] for 1 <= i < n + 1, i < n + 2.
        let n = var("n", 1, 100);
        let i = UOp::range(&n.add_const(2), 0, AxisType::Loop);
        let gate = UOp::index(0).bin(crate::uop::Op::CmpLt, &i).bin(
            crate::uop::Op::And,
            &i.bin(crate::uop::Op::CmpLt, &n.add_const(1)),
        );
        let slots = kernel(&i.add_const(-1), Some(&gate), std::slice::from_ref(&i));
        assert_eq!(slots[1].access, Some((0, 99)));
        for v in [1, 2, 17, 100] {
            assert_eq!(at(&slots[1], &[("n", v)]), Some((0, v - 1)));
        }
    }

    /// A small generator of index expressions over two ranges with
    /// variable or constant ends and two variables.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn forms_cover_every_accessed_element_of_random_indices() {
        use crate::uop::Op;
        let (n, m) = (var("n", 0, 5), var("m", 0, 5));
        let mut g = Gen(11);
        let mut with_form = 0;
        for case in 0..300 {
            let end0 = [n.add_const(1), n.clone(), UOp::index(4)][g.next(3) as usize].clone();
            let end1 = [m.clone(), UOp::index(3), m.add_const(2)][g.next(3) as usize].clone();
            let r0 = UOp::range(&end0, 0, AxisType::Loop);
            let r1 = UOp::range(&end1, 1, AxisType::Loop);
            let mut pool = vec![r0.clone(), r1.clone(), n.clone(), m.clone()];
            for _ in 0..4 {
                let a = pool[g.next(pool.len() as u64) as usize].clone();
                let b = pool[g.next(pool.len() as u64) as usize].clone();
                let k = UOp::index(g.next(5) as i64 + 1);
                pool.push(match g.next(9) {
                    0 => a.add(&b),
                    1 => a.sub(&b),
                    2 => a.mul(&k),
                    3 => a.mul(&b),
                    4 => a.bin(Op::Idiv, &k),
                    5 => a.bin(Op::Mod, &k),
                    6 => a.bin(Op::Idiv, &m.add_const(1)),
                    7 => a.bin(Op::Mod, &n.add_const(1)),
                    _ => a.bin(Op::Max, &b),
                });
            }
            let idx = pool.last().unwrap().clone();
            let gate = match g.next(4) {
                0 => Some(r0.bin(Op::CmpLt, &n)),
                1 => Some(
                    UOp::index(0)
                        .bin(Op::CmpLt, &r1)
                        .bin(Op::And, &r0.bin(Op::CmpLt, &m.add_const(1))),
                ),
                2 => Some(idx.bin(Op::CmpLt, &UOp::index(g.next(9) as i64))),
                _ => None,
            };
            let slot = &kernel(&idx, gate.as_ref(), &[r0.clone(), r1.clone()])[1];
            with_form += usize::from(slot.access_form.is_some());
            for (nv, mv) in [(0, 0), (1, 3), (2, 2), (5, 5), (3, 0), (4, 1)] {
                let mut leaves: HashMap<u64, ConstValue> = HashMap::new();
                leaves.insert(n.id(), ConstValue::Int(nv));
                leaves.insert(m.id(), ConstValue::Int(mv));
                let value = |x: &Arc<UOp>, l: &HashMap<u64, ConstValue>| match evaluate(x, l)?[0] {
                    ConstValue::Int(v) => Some(v),
                    ConstValue::Bool(b) => Some(i64::from(b)),
                    _ => None,
                };
                let (e0, e1) = (
                    value(&end0, &leaves).unwrap(),
                    value(&end1, &leaves).unwrap(),
                );
                let mut touched: Option<(i64, i64)> = None;
                for a in 0..e0 {
                    for b in 0..e1 {
                        let mut l = leaves.clone();
                        l.insert(r0.id(), ConstValue::Int(a));
                        l.insert(r1.id(), ConstValue::Int(b));
                        if gate.as_ref().is_some_and(|gt| value(gt, &l) == Some(0)) {
                            continue;
                        }
                        let Some(v) = value(&idx, &l) else { continue };
                        touched = Some(touched.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
                    }
                }
                let Some((lo, hi)) = touched else { continue };
                let (flo, fhi) = match &slot.access_form {
                    Some(_) => at(slot, &[("n", nv), ("m", mv)]),
                    None => slot.access,
                }
                .unwrap_or_else(|| panic!("case {case}: {idx:?} touches {lo}..={hi} at n={nv}, m={mv}, the form says none"));
                assert!(
                    flo <= lo && hi <= fhi,
                    "case {case}: {idx:?} under {gate:?} touches {lo}..={hi} at n={nv}, m={mv}, the form says {flo}..={fhi}"
                );
            }
        }
        assert!(
            with_form > 150,
            "only {with_form} of 300 indices had a form"
        );
    }
}
