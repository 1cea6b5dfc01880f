//! Conservative integer value bounds of index expressions, from which
//! [`super::slots`] derives the buffer access ranges.
//!
//! This analysis decides the index type (`i32` or `i64`) and the element
//! range each buffer slot may touch. It is sound (the true value always
//! lies inside the interval). It differs from the per-node intervals of
//! `crate::symbolic::bounds` in two ways that access ranges need: it keeps
//! linear forms, so `i - i + 3` is the point 3 rather than a widened
//! interval, and it uses a gate's linear comparisons as constraints, so a
//! gated load is bounded by the elements it can actually read.

use super::constraints::{normalized, propagate, split_nested, Constraint};
use crate::symbolic::gate::clauses;
use crate::symbolic::interval::{self, ceil_div, floor_div, scale};
use crate::symbolic::linear::Linear;
use crate::uop::{Arg, Op, UOp};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

pub use crate::symbolic::interval::Interval;

/// Memoizing interval evaluator. `overrides` pins the interval of chosen
/// nodes (used to narrow `RANGE`s under a gate); `constraints` are linear
/// constraints known to hold (a gate's comparisons), used to narrow the
/// interval of linear index arithmetic.
pub struct Bounds {
    memo: HashMap<u64, Interval>,
    overrides: HashMap<u64, Interval>,
    /// Linear forms of the evaluated nodes (atoms: nodes not expanded,
    /// such as a `RANGE`, a load, a division, or arithmetic that may have
    /// wrapped).
    lin: HashMap<u64, Linear>,
    /// Nodes whose arithmetic may have wrapped (their value is not the
    /// mathematical result of their operands): atoms of linear forms.
    wrapped: HashSet<u64>,
    constraints: Vec<Constraint>,
    /// The evaluated `x // m` and `x % m` nodes with a constant `m > 0`,
    /// by id: their `x` (by id), `m` and op. A constraint on one of them
    /// bounds a form that contains `x` once `x` is split into
    /// `m·(x // m) + x % m` (see [`Bounds::constrained`]).
    divisions: HashMap<u64, (u64, i128, Op)>,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds::new(HashMap::new())
    }
}

fn type_range(n: &UOp) -> Interval {
    let t = n.dtype().scalar_type();
    if t == crate::dtype::ScalarType::Index {
        (i64::MIN as i128, i64::MAX as i128)
    } else if t.is_int() || t.is_bool() {
        (t.min_int(), t.max_int())
    } else {
        // Floats have no integer bounds; callers only ask about integers.
        (i64::MIN as i128, i64::MAX as i128)
    }
}

impl Bounds {
    /// An evaluator with pinned intervals for some nodes (by id).
    pub fn new(overrides: HashMap<u64, Interval>) -> Self {
        Bounds {
            memo: HashMap::new(),
            overrides,
            lin: HashMap::new(),
            wrapped: HashSet::new(),
            constraints: Vec::new(),
            divisions: HashMap::new(),
        }
    }

    /// The linear form of an evaluated node (atoms: see [`Bounds::lin`]).
    pub(super) fn linear(&self, n: &Arc<UOp>) -> Option<&Linear> {
        self.lin.get(&n.id())
    }

    /// The interval of an evaluated node, by id.
    pub(super) fn interval(&self, id: u64) -> Option<Interval> {
        self.memo.get(&id).copied()
    }

    /// The interval a gate pinned a node to, by id.
    pub(super) fn override_of(&self, id: u64) -> Option<Interval> {
        self.overrides.get(&id).copied()
    }

    /// The linear form of an evaluated node, from its operands' forms.
    fn linear_of(&self, n: &Arc<UOp>) -> Linear {
        let atom = || Linear::atom(n);
        // A node pinned to one value (under a gate) is that constant.
        if let Some(&(lo, hi)) = self.overrides.get(&n.id()) {
            return if lo == hi { Linear::konst(lo) } else { atom() };
        }
        if self.wrapped.contains(&n.id()) {
            return atom();
        }
        let l = |i: usize| self.lin.get(&n.s(i).id());
        let konst = |i: usize| n.s(i).const_int();
        match n.op() {
            Op::Const => n.const_int().map_or_else(atom, Linear::konst),
            Op::Add => match (l(0), l(1)) {
                (Some(a), Some(b)) => a.add_scaled(b, 1),
                _ => atom(),
            },
            Op::Sub => match (l(0), l(1)) {
                (Some(a), Some(b)) => a.add_scaled(b, -1),
                _ => atom(),
            },
            Op::Neg => l(0).map_or_else(atom, |a| a.scale(-1)),
            Op::Mul => match (l(0), konst(1), l(1), konst(0)) {
                (Some(a), Some(k), _, _) | (_, _, Some(a), Some(k)) => a.scale(k),
                _ => atom(),
            },
            _ => atom(),
        }
    }

    /// The interval of a linear node implied by the constraints: the
    /// constrained parts of its form are bounded by the constraints, the
    /// rest by its atoms' intervals. `None` if no constraint applies.
    ///
    /// A constraint on `x // m` or `x % m` also applies to a form that
    /// contains `x` (with `m > 0` a constant): `x = m·(x // m) + x % m`
    /// for truncating division, so the term `k·x` is split into
    /// `k·m·(x // m) + k·(x % m)`, the constrained part goes on as a term
    /// and the other part is bounded by `x`'s interval. From the gate
    /// `5 < r // 3` and `r` in `[0, 35]` this bounds `143 - 4·r` by 71
    /// (the gate says `r >= 18`, which the form of `r` alone cannot see).
    /// Both the split and the unsplit form are tried; the result is their
    /// intersection.
    fn constrained(&self, form: &Linear) -> Option<Interval> {
        let terms = by_id(form);
        let konst = (form.constant, form.constant);
        let plain = self.constrained_terms(terms.clone(), konst, false);
        let split = self
            .split_by_divisions(terms, konst)
            .and_then(|(terms, total, pinned)| self.constrained_terms(terms, total, pinned));
        intersect_sound(plain, split)
    }

    /// `terms` with each atom `x` that a constrained `x // m` or `x % m`
    /// divides replaced by the constrained part (see
    /// [`Bounds::constrained`]), and `total` plus the interval of the
    /// other part; `None` when no atom splits. A division the gate pinned
    /// (an override: `1 < r % 3` leaves `r % 3` in `[2, 2]` and no
    /// constraint) adds its interval to `total` instead; the flag says
    /// that happened (the result bounds the form without a constraint).
    fn split_by_divisions(
        &self,
        mut terms: BTreeMap<u64, i128>,
        mut total: Interval,
    ) -> Option<(BTreeMap<u64, i128>, Interval, bool)> {
        let mut split = false;
        let mut pinned = false;
        let constrained = self.constraints.iter().flat_map(|k| k.terms.keys());
        for atom in constrained.chain(self.overrides.keys()) {
            let Some(&(x, m, op)) = self.divisions.get(atom) else {
                continue;
            };
            let (Some(&k), Some(&x_iv)) = (terms.get(&x), self.memo.get(&x)) else {
                continue;
            };
            terms.remove(&x);
            let quotient = interval::idiv(x_iv, (m, m)).unwrap_or((0, 0));
            let remainder = interval::rem(x_iv, (m, m)).unwrap_or((0, 0));
            let (coeff, other) = if op == Op::Idiv {
                (k.saturating_mul(m), scale(remainder, k))
            } else {
                (k, scale(quotient, k.saturating_mul(m)))
            };
            let part = match self.overrides.get(atom) {
                Some(&iv) => {
                    pinned = true;
                    scale(iv, coeff)
                }
                None => {
                    let c = terms.entry(*atom).or_insert(0);
                    *c = c.saturating_add(coeff);
                    if *c == 0 {
                        terms.remove(atom);
                    }
                    (0, 0)
                }
            };
            total = (
                total.0.saturating_add(other.0).saturating_add(part.0),
                total.1.saturating_add(other.1).saturating_add(part.1),
            );
            split = true;
        }
        split.then_some((terms, total, pinned))
    }

    /// [`Bounds::constrained`] of the form `Σ terms + total`; `applied`
    /// says the form is already narrowed (then a result comes back even
    /// if no constraint applies).
    ///
    /// Constraints are applied greedily, each consuming the atoms it
    /// covers, so the order matters: under `1 <= r` and `2·r + u <= 4`,
    /// the form `2·r + u` taken by the first constraint leaves `u` alone
    /// (`[2, 4] + [0, 1]`), where the second bounds it whole (`<= 4`).
    /// Both orders are tried, the constraints over more atoms first and
    /// as listed, and the intervals intersected (each is sound).
    fn constrained_terms(
        &self,
        rest: BTreeMap<u64, i128>,
        total: Interval,
        applied: bool,
    ) -> Option<Interval> {
        let mut widest_first: Vec<&Constraint> = self.constraints.iter().collect();
        widest_first.sort_by_key(|k| std::cmp::Reverse(k.terms.len()));
        let listed: Vec<&Constraint> = self.constraints.iter().collect();
        let a = self.constrained_in_order(&widest_first, rest.clone(), total, applied);
        let b = self.constrained_in_order(&listed, rest, total, applied);
        intersect_sound(a, b)
    }

    /// [`Bounds::constrained_terms`] with the constraints applied in the
    /// order `order`.
    fn constrained_in_order(
        &self,
        order: &[&Constraint],
        mut rest: BTreeMap<u64, i128>,
        mut total: Interval,
        mut applied: bool,
    ) -> Option<Interval> {
        for k in order {
            let Some(f) = k.multiple_in(&rest) else {
                continue;
            };
            let iv = scale((k.lo, k.hi), f);
            total = (total.0.saturating_add(iv.0), total.1.saturating_add(iv.1));
            for a in k.terms.keys() {
                rest.remove(a);
            }
            applied = true;
        }
        if !applied {
            return None;
        }
        for (a, k) in &rest {
            let iv = scale(*self.memo.get(a)?, *k);
            total = (total.0.saturating_add(iv.0), total.1.saturating_add(iv.1));
        }
        Some(total)
    }

    /// Bounds of an integer or bool node. Operands are evaluated first
    /// (iteratively, so deep expressions do not recurse).
    pub fn of(&mut self, root: &Arc<UOp>) -> Interval {
        if let Some(v) = self.memo.get(&root.id()) {
            return *v;
        }
        for n in root.toposort() {
            if !self.memo.contains_key(&n.id()) {
                let (mut v, wrapped) = self.node(&n);
                if wrapped {
                    self.wrapped.insert(n.id());
                }
                if let (Op::Idiv | Op::Mod, Some(m)) =
                    (n.op(), n.src().get(1).and_then(|d| d.const_int()))
                {
                    if m > 0 {
                        self.divisions.insert(n.id(), (n.s(0).id(), m, n.op()));
                    }
                }
                let form = self.linear_of(&n);
                // Linear arithmetic that did not wrap equals its linear
                // form, so the constraints bound it.
                let narrowed = !self.constraints.is_empty() || !self.overrides.is_empty();
                if !wrapped && narrowed && matches!(n.op(), Op::Add | Op::Sub | Op::Mul | Op::Neg) {
                    if let Some(c) = self.constrained(&form) {
                        let w = (v.0.max(c.0), v.1.min(c.1));
                        if w.0 <= w.1 {
                            v = w;
                        }
                    }
                }
                self.lin.insert(n.id(), form);
                self.memo.insert(n.id(), v);
            }
        }
        self.memo[&root.id()]
    }

    /// One node, its operands already evaluated, and whether its
    /// arithmetic may have wrapped. Each case is the standard interval
    /// rule; the result is intersected with the type's range when
    /// arithmetic could wrap (then the full type range is the only sound
    /// answer, see [`Bounds::clamp`]).
    fn node(&self, n: &Arc<UOp>) -> (Interval, bool) {
        let (v, wrapped) = self.computed(n);
        match self.overrides.get(&n.id()) {
            // A pinned interval holds under the gate; the node's own rule
            // may know more (its operands were narrowed too).
            Some(&o) => {
                let w = (o.0.max(v.0), o.1.min(v.1));
                (if w.0 <= w.1 { w } else { o }, false)
            }
            None => (v, wrapped),
        }
    }

    /// [`Bounds::node`] without the node's own override.
    fn computed(&self, n: &Arc<UOp>) -> (Interval, bool) {
        let s = |i: usize| self.memo[&n.s(i).id()];
        let full = type_range(n);
        let v = match n.op() {
            Op::Const => match n.const_int() {
                Some(v) => (v, v),
                None => full,
            },
            Op::DefineVar => match n.arg() {
                Arg::Var { min, max, .. } => (*min as i128, *max as i128),
                _ => full,
            },
            Op::Range | Op::Special => (0, (s(0).1 - 1).max(0)),
            Op::Add => (s(0).0.saturating_add(s(1).0), s(0).1.saturating_add(s(1).1)),
            Op::Sub => (s(0).0.saturating_sub(s(1).1), s(0).1.saturating_sub(s(1).0)),
            Op::Mul => {
                let (a, b) = (s(0), s(1));
                let c = [
                    a.0.saturating_mul(b.0),
                    a.0.saturating_mul(b.1),
                    a.1.saturating_mul(b.0),
                    a.1.saturating_mul(b.1),
                ];
                (
                    c.into_iter().min().unwrap_or(0),
                    c.into_iter().max().unwrap_or(0),
                )
            }
            Op::Neg => (s(0).1.saturating_neg(), s(0).0.saturating_neg()),
            Op::Idiv => {
                let (a, b) = (s(0), s(1));
                if b.0 > 0 || b.1 < 0 {
                    interval::idiv(a, b).unwrap_or((0, 0))
                } else {
                    // Division by zero yields 0; otherwise |a / b| <= |a|.
                    let m = a.0.abs().max(a.1.abs());
                    (-m, m)
                }
            }
            // Modulo by zero yields 0 (which every remainder interval holds
            // when the divisor may be 0).
            Op::Mod => interval::rem(s(0), s(1)).unwrap_or((0, 0)),
            Op::Max => (s(0).0.max(s(1).0), s(0).1.max(s(1).1)),
            Op::Min => (s(0).0.min(s(1).0), s(0).1.min(s(1).1)),
            Op::Where => (s(1).0.min(s(2).0), s(1).1.max(s(2).1)),
            Op::Cast if n.s(0).dtype().is_int() || n.s(0).dtype().is_bool() => s(0),
            Op::Shl => match n.s(1).const_int() {
                Some(k) if (0..64).contains(&k) => {
                    (s(0).0.saturating_mul(1 << k), s(0).1.saturating_mul(1 << k))
                }
                _ => full,
            },
            Op::Shr => match n.s(1).const_int() {
                Some(k) if (0..64).contains(&k) => (s(0).0 >> k, s(0).1 >> k),
                _ => full,
            },
            Op::And if s(0).0 >= 0 && s(1).0 >= 0 => (0, s(0).1.min(s(1).1)),
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe | Op::IsNan => (0, 1),
            _ => full,
        };
        let c = Bounds::clamp(v, full);
        (c, c != v)
    }

    /// The interval if it fits the type; otherwise the value may have
    /// wrapped, and only the type's full range is sound.
    fn clamp(v: Interval, full: Interval) -> Interval {
        if v.0 >= full.0 && v.1 <= full.1 && v.0 <= v.1 {
            v
        } else {
            full
        }
    }
}

/// The terms of a linear form keyed by node id, in id order (the
/// normal form of constraints).
fn by_id(form: &Linear) -> BTreeMap<u64, i128> {
    form.terms.iter().map(|(t, k)| (t.id(), *k)).collect()
}

/// Linear constraints of a gate: each conjunct (`AND`) comparing two
/// integer expressions (`<`, `<=`, possibly negated by `NOT` or
/// `CMPEQ(clause, false)`) whose difference is linear in its atoms
/// becomes `lo <= sum(coeff * atom) <= hi`, intersected with the interval
/// its atoms allow. Other conjuncts are ignored, which only loses
/// precision. `None` if a constraint is unsatisfiable (the gate is never
/// true).
fn gate_constraints(gate: &Arc<UOp>, bounds: &mut Bounds) -> Option<Vec<Constraint>> {
    let mut merged: BTreeMap<Vec<(u64, i128)>, Interval> = BTreeMap::new();
    for clause in clauses(gate).0 {
        let (a, b) = (&clause.lhs, &clause.rhs);
        if !a.dtype().is_int() {
            continue;
        }
        bounds.of(a);
        bounds.of(b);
        // Operands that may have wrapped are atoms of their own
        // forms, so the difference is exact.
        let d = bounds.lin[&a.id()].add_scaled(&bounds.lin[&b.id()], -1);
        let (lo, hi) = clause.difference();
        let (lo, hi) = (lo.saturating_sub(d.constant), hi.saturating_sub(d.constant));
        if d.terms.is_empty() {
            // A comparison of constants: true, or the gate never is.
            if lo > 0 || hi < 0 {
                return None;
            }
            continue;
        }
        let (key, lo, hi) = normalized(by_id(&d), lo, hi);
        let mut natural = (0i128, 0i128);
        for (atom, k) in &key {
            let iv = scale(bounds.memo[atom], *k);
            natural = (
                natural.0.saturating_add(iv.0),
                natural.1.saturating_add(iv.1),
            );
        }
        let e = merged.entry(key).or_insert(natural);
        *e = (e.0.max(lo), e.1.min(hi));
    }
    split_nested(&mut merged, &bounds.memo);
    if merged.values().any(|(lo, hi)| lo > hi) {
        return None;
    }
    let mut cons: Vec<Constraint> = merged
        .into_iter()
        .map(|(k, (lo, hi))| Constraint {
            terms: k.into_iter().collect(),
            lo,
            hi,
        })
        .collect();
    propagate(&mut cons, &bounds.memo).then_some(cons)
}

/// Narrows `RANGE` intervals under a gate: a conjunction (`AND`) of
/// clauses `r < c`, `c < r`, `r <= c`, `c <= r` and their negations
/// (`NOT`, or `CMPEQ(clause, false)`) with `r` a `RANGE` and `c` a
/// constant. Other clauses are ignored, which only loses precision.
fn gate_overrides(gate: &Arc<UOp>, bounds: &mut Bounds) -> HashMap<u64, Interval> {
    let mut out: HashMap<u64, Interval> = HashMap::new();
    for clause in clauses(gate).0 {
        let Some((r, lo, hi)) = clause.range_bound() else {
            continue;
        };
        let cur = *out.entry(r.id()).or_insert_with(|| bounds.of(r));
        out.insert(r.id(), (lo.max(cur.0), hi.min(cur.1)));
    }
    out
}

/// The interval of index `idx` accessed under `gate` and the evaluator
/// that bounded it, or `None` when the gate is never true. A constraint on one atom (`lo <= k·a <= hi`)
/// narrows that atom's interval, and the constraints are derived again
/// with the narrowed atoms (an atom pinned to one value becomes a
/// constant), a few rounds: `1 < 5·r` pins `r = 1` (for `r` in
/// `[0, 1]`), which then shows `15·r + s < 12` unsatisfiable for `s >= 0`.
pub(super) fn gated_access(
    gate: &Arc<UOp>,
    idx: &Arc<UOp>,
    plain: &mut Bounds,
) -> Option<(Interval, Bounds)> {
    // A gate folded to false (complementary comparisons, say) never opens.
    if gate.const_value().is_some_and(|c| !c.truthy()) {
        return None;
    }
    let mut ov = gate_overrides(gate, plain);
    let mut rounds = 0;
    let (cons, divisions) = loop {
        if ov.values().any(|(lo, hi)| lo > hi) {
            return None;
        }
        // The atoms' intervals under the narrowing so far, so that a
        // constraint narrows an atom from its tightest known interval.
        let mut current = Bounds::new(ov.clone());
        let cons = gate_constraints(gate, &mut current)?;
        rounds += 1;
        if rounds > 4 || !narrow_atoms(&cons, &mut ov, &current) {
            break (cons, current.divisions);
        }
    };
    if ov.values().any(|(lo, hi)| lo > hi) {
        return None;
    }
    let mut gated = Bounds::new(ov);
    gated.constraints = cons;
    // The gate's divisions, which the index may not contain itself.
    gated.divisions = divisions;
    let range = gated.of(idx);
    Some((range, gated))
}

/// The intersection of two sound bounds of one value, either of which
/// may be missing (an empty intersection keeps the first: both hold, so
/// the value is never reached).
fn intersect_sound(a: Option<Interval>, b: Option<Interval>) -> Option<Interval> {
    match (a, b) {
        (Some(a), Some(b)) if a.0.max(b.0) <= a.1.min(b.1) => Some((a.0.max(b.0), a.1.min(b.1))),
        (a, b) => a.or(b),
    }
}

/// Narrows the intervals in `ov` with the constraints, starting from the
/// atoms' intervals in `current` (evaluated under `ov`), (interval constraint propagation): in
/// `lo <= sum(k_i·a_i) <= hi`, each term `k_j·a_j` lies in
/// `[lo - max(rest), hi - min(rest)]`, where `rest` is the sum of the
/// other terms over their current intervals, so `a_j` lies in that
/// interval divided by `k_j` (rounded inwards: `a_j` is an integer). A
/// constraint on one atom is the case `rest = 0`: `1 < 5·r` gives
/// `r >= 1`. With several atoms, `4·r + s <= 7` for `s` in `[0, 3]` gives
/// `r <= 1` (the gate of the first part of a `cat` whose index was
/// flattened and divided again). Sound because every term of a satisfied
/// constraint takes a value within its interval. Returns whether any
/// interval changed.
fn narrow_atoms(cons: &[Constraint], ov: &mut HashMap<u64, Interval>, current: &Bounds) -> bool {
    let mut changed = false;
    for k in cons {
        let cur: Option<Vec<Interval>> = k
            .terms
            .keys()
            .map(|a| current.memo.get(a).copied())
            .collect();
        let Some(cur) = cur else {
            continue;
        };
        let scaled: Vec<Interval> = k
            .terms
            .values()
            .zip(&cur)
            .map(|(&c, &iv)| scale(iv, c))
            .collect();
        for (j, (&atom, &coeff)) in k.terms.iter().enumerate() {
            if coeff == 0 {
                continue;
            }
            let mut rest = (0i128, 0i128);
            for (i, iv) in scaled.iter().enumerate() {
                if i != j {
                    rest = (rest.0.saturating_add(iv.0), rest.1.saturating_add(iv.1));
                }
            }
            // Bounds near the ends of i128 stand for "unbounded".
            let lo = (k.lo > i128::MIN / 2).then(|| k.lo.saturating_sub(rest.1));
            let hi = (k.hi < i128::MAX / 2).then(|| k.hi.saturating_sub(rest.0));
            let (lo, hi) = if coeff > 0 {
                (
                    lo.map(|v| ceil_div(v, coeff)),
                    hi.map(|v| floor_div(v, coeff)),
                )
            } else {
                (
                    hi.map(|v| ceil_div(v, coeff)),
                    lo.map(|v| floor_div(v, coeff)),
                )
            };
            let mut next = cur[j];
            if let Some(lo) = lo.filter(|v| v.abs() < i128::MAX / 4) {
                next.0 = next.0.max(lo);
            }
            if let Some(hi) = hi.filter(|v| v.abs() < i128::MAX / 4) {
                next.1 = next.1.min(hi);
            }
            if next != cur[j] {
                ov.insert(atom, next);
                changed = true;
            }
        }
    }
    changed
}

/// True if an index expression depends on loaded data (a `LOAD`, or a
/// `REDUCE` before reduce lowering). Its bounds are the index type's
/// whole range and say nothing useful, so such an access is not part of
/// [`BufferSlot::access`]: renderers must check it against the buffer's
/// size when it executes (an out-of-range read yields 0, an out-of-range
/// write is dropped).
pub fn is_data_dependent(idx: &Arc<UOp>) -> bool {
    idx.toposort()
        .iter()
        .any(|n| matches!(n.op(), Op::Load | Op::Reduce))
}
