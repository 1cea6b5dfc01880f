//! The linearizer: schedules a lowered kernel graph into nested loop
//! blocks and flattens them into a list with explicit `RANGE` … `END`.
//!
//! # Scheduling model
//!
//! - The **live ranges** of a node are the `RANGE`s its value varies with:
//!   a `RANGE` is live in itself and its users, and `END(x, r...)` stops
//!   `r...` from being live past it.
//! - **Loop nesting** comes from the `END`s. `END(x, r0, r1, ...)` opens
//!   `r0` inside the deepest range still live around the `END`, `r1` inside
//!   `r0`, and so on. `END`s are visited from the root down, so an outer
//!   loop's nesting is known before the `END`s inside it.
//! - Every other node is placed in its **scope**: the deepest of its live
//!   ranges (for the operand an `END` closes, also the closed ranges, so a
//!   store that does not use a loop counter still runs once per
//!   iteration). A node therefore runs in the outermost loop where its
//!   value is defined, which hoists loop-invariant code for free. The live
//!   ranges of one node must lie on one chain of nested loops, or the
//!   graph cannot be scheduled and an error is returned.
//! - Within one scope the items (nodes placed there and child loops, each
//!   loop an indivisible block) are ordered by a topological sort that
//!   prefers definitions first, then constants, loads, arithmetic, stores,
//!   and opens loops as late as possible (the seed's priorities).
//!
//! Gated stores become `IF(gate)`, the ungated store, `ENDIF`.

use super::live::live_ranges;
use super::{LowerError, ParallelLoop};
use crate::uop::{Arg, AxisType, Op, Srcs, UOp};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

/// The linear program and its parallel loop (see [`super::LoweredKernel`]).
pub struct Linear {
    /// Operations in execution order.
    pub ops: Vec<Arc<UOp>>,
    /// The outermost loop if its iterations are independent.
    pub parallel: Option<ParallelLoop>,
}

/// Priority of an item within its scope: lower goes first.
fn priority(n: &UOp) -> i32 {
    match n.op() {
        Op::DefineGlobal => -20,
        Op::DefineVar => -19,
        Op::DefineLocal => -18,
        Op::DefineReg => -17,
        Op::Const => -10,
        Op::Load => -1,
        Op::Store => 1,
        Op::Range => 5,
        _ => 0,
    }
}

/// Loop tree and node placement.
struct Schedule {
    /// Parent loop of each range (by id); `None` is the kernel body.
    parent: HashMap<u64, Option<u64>>,
    /// Nesting depth of each range (outermost loops have depth 1).
    depth: HashMap<u64, usize>,
    /// Scope of each non-RANGE node.
    scope: HashMap<u64, Option<u64>>,
}

impl Schedule {
    /// The deepest of `ranges`, checking they lie on one chain of loops.
    fn deepest(&self, ranges: &[Arc<UOp>], at: &Arc<UOp>) -> Result<Option<u64>, LowerError> {
        let mut best: Option<u64> = None;
        for r in ranges {
            let Some(d) = self.depth.get(&r.id()) else {
                return Err(LowerError::malformed(
                    format!("range {:?} is used but never closed by an END", r),
                    at,
                ));
            };
            if best.is_none_or(|b| *d > self.depth[&b]) {
                best = Some(r.id());
            }
        }
        for r in ranges {
            if !self.is_ancestor_or_self(r.id(), best) {
                return Err(LowerError::malformed(
                    "node depends on ranges that are not nested in one another",
                    at,
                ));
            }
        }
        Ok(best)
    }

    /// True if range `a` is `b` or encloses it.
    fn is_ancestor_or_self(&self, a: u64, mut b: Option<u64>) -> bool {
        while let Some(x) = b {
            if x == a {
                return true;
            }
            b = self.parent[&x];
        }
        false
    }

    /// The item of scope `s` that contains node `n`: the node itself, the
    /// child loop block it lies in, or `None` if it lies outside `s`.
    fn item_in(&self, s: Option<u64>, n: &UOp) -> Option<u64> {
        let mut a = if n.op() == Op::Range {
            Some(n.id())
        } else {
            let sc = self.scope[&n.id()];
            if sc == s {
                return Some(n.id());
            }
            sc
        };
        while let Some(r) = a {
            if self.parent[&r] == s {
                return Some(r);
            }
            a = self.parent[&r];
        }
        None
    }
}

/// Schedules and flattens a lowered kernel graph (see the module docs).
pub fn linearize(sink: &Arc<UOp>) -> Result<Linear, LowerError> {
    if sink.op() != Op::Sink {
        return Err(LowerError::malformed("linearize needs a SINK", sink));
    }
    let mut nodes = sink.toposort();
    nodes.pop(); // the SINK itself
    let position: HashMap<u64, usize> =
        nodes.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let mut live = HashMap::new();
    let open = live_ranges(sink, &mut live);
    if let Some(r) = open.first() {
        return Err(LowerError::malformed(
            "a range is live at the SINK: it is not closed by any END",
            r,
        ));
    }

    let mut sched = Schedule {
        parent: HashMap::new(),
        depth: HashMap::new(),
        scope: HashMap::new(),
    };
    // Loop nesting from the ENDs, root first.
    let mut forced: HashMap<u64, Vec<Arc<UOp>>> = HashMap::new();
    for e in nodes.iter().rev().filter(|n| n.op() == Op::End) {
        let mut outer = sched.deepest(&live[&e.id()], e)?;
        for r in &e.src()[1..] {
            match sched.parent.get(&r.id()) {
                Some(p) if *p != outer => {
                    return Err(LowerError::malformed(
                        "a range is closed by ENDs at two different loop nestings",
                        e,
                    ))
                }
                Some(_) => {}
                None => {
                    let d = outer.map_or(0, |o| sched.depth[&o]) + 1;
                    sched.parent.insert(r.id(), outer);
                    sched.depth.insert(r.id(), d);
                }
            }
            outer = Some(r.id());
        }
        forced
            .entry(e.s(0).id())
            .or_default()
            .extend(e.src()[1..].iter().cloned());
    }
    for n in &nodes {
        if n.op() == Op::Range {
            if !sched.parent.contains_key(&n.id()) {
                return Err(LowerError::malformed("RANGE is never closed by an END", n));
            }
            continue;
        }
        let mut ranges = live[&n.id()].clone();
        if let Some(f) = forced.get(&n.id()) {
            ranges.extend(f.iter().cloned());
        }
        let s = sched.deepest(&ranges, n)?;
        sched.scope.insert(n.id(), s);
    }

    // Members of each scope, and every node inside each loop block.
    let mut members: HashMap<Option<u64>, Vec<Arc<UOp>>> = HashMap::new();
    let mut inside: HashMap<u64, Vec<Arc<UOp>>> = HashMap::new();
    for n in &nodes {
        let home = if n.op() == Op::Range {
            sched.parent[&n.id()]
        } else {
            sched.scope[&n.id()]
        };
        members.entry(home).or_default().push(n.clone());
        let mut a = if n.op() == Op::Range {
            Some(n.id())
        } else {
            home
        };
        while let Some(r) = a {
            inside.entry(r).or_default().push(n.clone());
            a = sched.parent[&r];
        }
    }

    let mut em = Emitter {
        sched: &sched,
        members: &members,
        inside: &inside,
        position: &position,
        ops: Vec::with_capacity(nodes.len() + 8),
    };
    em.scope(None)?;
    let ops = em.ops;
    let parallel = find_parallel(&nodes, &sched, &inside, &mut live);
    Ok(Linear { ops, parallel })
}

struct Emitter<'a> {
    sched: &'a Schedule,
    members: &'a HashMap<Option<u64>, Vec<Arc<UOp>>>,
    inside: &'a HashMap<u64, Vec<Arc<UOp>>>,
    position: &'a HashMap<u64, usize>,
    ops: Vec<Arc<UOp>>,
}

impl Emitter<'_> {
    /// Emits scope `s`: a priority topological sort of its items.
    fn scope(&mut self, s: Option<u64>) -> Result<(), LowerError> {
        let Some(items) = self.members.get(&s) else {
            return Ok(());
        };
        let by_id: HashMap<u64, &Arc<UOp>> = items.iter().map(|n| (n.id(), n)).collect();
        // deps[item] = items of this scope it waits for.
        let mut users: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut waiting: HashMap<u64, usize> = HashMap::new();
        for item in items {
            let body: &[Arc<UOp>] = if item.op() == Op::Range {
                &self.inside[&item.id()]
            } else {
                std::slice::from_ref(item)
            };
            let deps: HashSet<u64> = body
                .iter()
                .flat_map(|m| m.src().iter())
                .filter_map(|src| self.sched.item_in(s, src))
                .filter(|d| *d != item.id())
                .collect();
            waiting.insert(item.id(), deps.len());
            for d in deps {
                users.entry(d).or_default().push(item.id());
            }
        }
        let key = |n: &Arc<UOp>| Reverse((priority(n), self.position[&n.id()], n.id()));
        let mut ready: BinaryHeap<_> = items
            .iter()
            .filter(|n| waiting[&n.id()] == 0)
            .map(key)
            .collect();
        let mut emitted = 0;
        while let Some(Reverse((_, _, id))) = ready.pop() {
            emitted += 1;
            let n = by_id[&id];
            self.item(n)?;
            for u in users.get(&id).map(Vec::as_slice).unwrap_or(&[]) {
                // `users` only holds items of this scope, all in `waiting`.
                if let Some(w) = waiting.get_mut(u) {
                    *w -= 1;
                    if *w == 0 {
                        ready.push(key(by_id[u]));
                    }
                }
            }
        }
        if emitted != items.len() {
            return Err(LowerError::malformed(
                "cyclic dependencies between loops (a loop uses a result computed after it)",
                &items[0],
            ));
        }
        Ok(())
    }

    /// Emits one item: a loop block, a gated store, or a plain node.
    fn item(&mut self, n: &Arc<UOp>) -> Result<(), LowerError> {
        match n.op() {
            Op::Range => {
                self.ops.push(n.clone());
                self.scope(Some(n.id()))?;
                let end: Srcs = std::iter::once(n.clone()).collect();
                self.ops
                    .push(UOp::new(Op::End, n.dtype().base(), end, Arg::None));
            }
            // Ordering-only nodes: they emit nothing.
            Op::End | Op::After => {}
            Op::Store if n.s(0).src().len() == 3 => {
                let index = n.s(0);
                let gate = index.s(2).clone();
                let ungated: Srcs = index.src()[..2].iter().cloned().collect();
                let ungated = index.with_sources(ungated);
                let if_ = UOp::new(
                    Op::If,
                    crate::dtype::DType::VOID,
                    std::iter::once(gate).collect::<Srcs>(),
                    Arg::None,
                );
                let store = ungated.store(n.s(1));
                self.ops.push(if_.clone());
                self.ops.push(ungated);
                self.ops.push(store.clone());
                let endif: Srcs = [if_, store].into_iter().collect();
                self.ops.push(UOp::new(
                    Op::EndIf,
                    crate::dtype::DType::VOID,
                    endif,
                    Arg::None,
                ));
            }
            _ => self.ops.push(n.clone()),
        }
        Ok(())
    }
}

/// Picks the loop a host may split across threads: the only outermost
/// loop that contains global stores, if it is an output loop (`Loop`,
/// `Global` or `Thread`) with a constant trip count or one bounded by a
/// variable ([`trip_count`]), every global store of
/// the kernel is inside it and indexed by it through index arithmetic
/// (so iterations write disjoint elements; a data-dependent index could
/// collide), and no buffer is both read and written (so no iteration
/// reads what another writes). Like the kernel AST contract, it takes
/// distinct iterations of the output ranges to store distinct elements.
fn find_parallel(
    nodes: &[Arc<UOp>],
    sched: &Schedule,
    inside: &HashMap<u64, Vec<Arc<UOp>>>,
    live: &mut HashMap<u64, Vec<Arc<UOp>>>,
) -> Option<ParallelLoop> {
    let is_global_store =
        |n: &Arc<UOp>| n.op() == Op::Store && n.s(0).s(0).op() == Op::DefineGlobal;
    let stores: Vec<&Arc<UOp>> = nodes.iter().filter(|n| is_global_store(n)).collect();
    let mut written = HashSet::new();
    let mut read = HashSet::new();
    for n in nodes {
        if n.op() == Op::Index && n.s(0).op() == Op::DefineGlobal {
            if let Arg::Int(slot) = n.s(0).arg() {
                if stores.iter().any(|s| Arc::ptr_eq(s.s(0), n)) {
                    written.insert(*slot);
                }
            }
        }
        if n.op() == Op::Load && n.s(0).s(0).op() == Op::DefineGlobal {
            if let Arg::Int(slot) = n.s(0).s(0).arg() {
                read.insert(*slot);
            }
        }
    }
    if written.intersection(&read).next().is_some() {
        return None;
    }
    let candidates: Vec<&Arc<UOp>> = nodes
        .iter()
        .filter(|n| n.op() == Op::Range && sched.parent[&n.id()].is_none())
        .filter(|r| inside[&r.id()].iter().any(is_global_store))
        .collect();
    let [range] = candidates.as_slice() else {
        return None;
    };
    if !matches!(
        range.axis_type(),
        Some(AxisType::Loop | AxisType::Global | AxisType::Thread)
    ) {
        return None;
    }
    let (size, var) = trip_count(range.s(0))?;
    for s in &stores {
        let in_loop = inside[&range.id()].iter().any(|n| Arc::ptr_eq(n, s));
        let indexed = live_ranges(s.s(0).s(1), live)
            .iter()
            .any(|r| Arc::ptr_eq(r, range));
        if !in_loop || !indexed || super::bounds::is_data_dependent(s.s(0).s(1)) {
            return None;
        }
    }
    Some(ParallelLoop {
        range: (*range).clone(),
        size,
        var,
    })
}

/// A parallel loop's trip count from its bound: a constant, or a variable
/// (`DEFINE_VAR`) alone or times a constant, whose value the host reads at
/// launch (then the count at the variable's largest value, and the
/// variable's name and factor).
fn trip_count(bound: &Arc<UOp>) -> Option<(usize, Option<(String, usize)>)> {
    let non_negative = |v: i128| usize::try_from(v).ok();
    if let Some(v) = bound.const_int() {
        return Some((non_negative(v)?, None));
    }
    let (var, scale) = match bound.op() {
        Op::DefineVar => (bound, 1),
        Op::Mul => match (bound.s(0).const_int(), bound.s(1).const_int()) {
            (None, Some(k)) if bound.s(0).op() == Op::DefineVar => (bound.s(0), non_negative(k)?),
            (Some(k), None) if bound.s(1).op() == Op::DefineVar => (bound.s(1), non_negative(k)?),
            _ => return None,
        },
        _ => return None,
    };
    let Arg::Var { name, max, .. } = var.arg() else {
        return None;
    };
    let largest = non_negative(i128::from(*max))?.checked_mul(scale)?;
    Some((largest, Some((name.to_string(), scale))))
}
