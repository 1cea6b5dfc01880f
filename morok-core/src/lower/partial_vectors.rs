//! Vector accumulators for `PARTIALS` (`crate::opt::reduce_strategy`).
//!
//! `PARTIALS(r, amt)` leaves a balanced tree of `⊕` over `amt` scalar
//! reduces `Pᵤ = REDUCE(v[r := ro·amt + u], ro, …)`. Lowered as they are,
//! they are `amt` scalar accumulators with a scalar load each. This stage
//! (after [`super::vectorize`], on the scalar reduces it left) finds such a
//! tree and gives its leaves as vectors:
//!
//! 1. the leaves' values are generalized to one value `V` of a fresh lane
//!    range `l`: walking `P₀`'s and `P₁`'s values side by side, where they
//!    differ `P₁` must be `P₀`'s node plus one, which becomes `node + l`;
//!    every lane `u` is then checked: `V[l := u]`, simplified, is `Pᵤ`'s
//!    value (simplified), else the tree is left alone;
//! 2. the lanes are cut into chunks of `w`, the host's lanes of the
//!    element type (`Caps::vector_lanes`, at most `amt`): chunk `c` is
//!    `REDUCE(V[l := c·w + l′], ro, …)` over a lane range `l′`, vectorized
//!    like a store's lanes ([`super::vectorize`]: consecutive elements are
//!    one vector load, the accumulator a vector);
//! 3. each leaf `Pᵤ` of the tree is replaced by `GEP(chunk u/w, u mod w)`.
//!
//! Correct and bit-identical: lane `i` of chunk `c` accumulates exactly
//! what `P_{c·w+i}` accumulated, in the same order (step 1 checks this),
//! and the tree that combines the lanes after the loop is kept as it was.
//!
//! The walk over the trees is hand-written: a tree is recognized from its
//! leaves up, which a `graph_rewrite` rule (one node at a time) cannot see.

use super::vectorize::{gep, Lanewise};
use crate::caps::{is_vector_element, Caps};
use crate::dtype::DType;
use crate::uop::{Arg, AxisType, Op, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Gives the partial accumulators of every `PARTIALS` tree in `g` as
/// vectors (see the module docs). Graphs without such trees, and targets
/// without vectors, are returned as they are.
pub fn vectorize_partials(g: &Arc<UOp>, caps: &Caps) -> Arc<UOp> {
    let order = g.toposort();
    let mut leaves: HashMap<u64, Vec<Arc<UOp>>> = HashMap::new();
    for n in &order {
        if let Some(l) = tree_leaves(n, &leaves) {
            leaves.insert(n.id(), l);
        }
    }
    // The largest trees first (a subtree of a chosen tree is not one).
    let mut next_axis = super::next_axis_id(g);
    let mut taken: HashSet<u64> = HashSet::new();
    let mut chosen: Vec<&[Arc<UOp>]> = Vec::new();
    for n in order.iter().rev() {
        let Some(l) = leaves.get(&n.id()) else {
            continue;
        };
        if l.len() < 2 || l.iter().any(|x| taken.contains(&x.id())) {
            continue;
        }
        if lane_value(l, &lane_range(l.len(), &mut next_axis)).is_some() {
            taken.extend(l.iter().map(|x| x.id()));
            chosen.push(l);
        }
    }
    // Inner trees first: a tree's leaves may hold an inner tree (softmax's
    // sum of exps holds the max), which they then read as vector lanes.
    let mut map: HashMap<u64, Arc<UOp>> = HashMap::new();
    for l in chosen.into_iter().rev() {
        let inner: Vec<Arc<UOp>> = l.iter().map(|x| x.substitute(&map)).collect();
        if let Some(geps) = vector_lanes(&inner, caps, &mut next_axis) {
            map.extend(l.iter().map(|x| x.id()).zip(geps));
        }
    }
    if map.is_empty() {
        g.clone()
    } else {
        g.substitute(&map)
    }
}

/// The scalar reduces that `n` combines, left to right: `[n]` for a
/// scalar float or integer `REDUCE`, the leaves of both operands for `⊕`
/// of two such trees with the same reduce op and the same ranges.
fn tree_leaves(n: &Arc<UOp>, leaves: &HashMap<u64, Vec<Arc<UOp>>>) -> Option<Vec<Arc<UOp>>> {
    if n.op() == Op::Reduce {
        let t = n.dtype();
        return (t.count() == 1 && is_vector_element(t.scalar_type())).then(|| vec![n.clone()]);
    }
    if n.src().len() != 2 {
        return None;
    }
    let (a, b) = (leaves.get(&n.s(0).id())?, leaves.get(&n.s(1).id())?);
    let same = |x: &Arc<UOp>| {
        x.arg() == a[0].arg()
            && x.src()[1..]
                .iter()
                .zip(&a[0].src()[1..])
                .all(|(p, q)| Arc::ptr_eq(p, q))
            && x.src().len() == a[0].src().len()
    };
    let Arg::Reduce(op) = *a[0].arg() else {
        return None;
    };
    (n.op() == op.alu() && b.iter().all(same)).then(|| a.iter().chain(b).cloned().collect())
}

/// For the leaves `Pᵤ` of one tree: `GEP`s of vector reduces equal to
/// them (steps 1 and 2 of the module docs), or `None`.
fn vector_lanes(leaves: &[Arc<UOp>], caps: &Caps, next_axis: &mut usize) -> Option<Vec<Arc<UOp>>> {
    let amt = leaves.len();
    let dtype = leaves[0].dtype();
    let host = caps.vector_lanes(dtype.scalar_type()) as usize;
    let w = (1..=host.min(amt))
        .rev()
        .find(|w| w.is_power_of_two() && amt.is_multiple_of(*w))?;
    if w < 2 {
        return None;
    }
    let l = lane_range(amt, next_axis);
    let l2 = lane_range(w, next_axis);
    let value = lane_value(leaves, &l)?;
    let simplify = |x: &Arc<UOp>| crate::symbolic::simplify(x).ok();
    let mut lanes = Vec::with_capacity(amt);
    for c in 0..amt / w {
        let at = l2.add(&UOp::index((c * w) as i64));
        let chunk = simplify(&value.substitute(&HashMap::from([(l.id(), at)])))?;
        let mut src: Srcs = leaves[0].src().iter().cloned().collect();
        src[0] = chunk;
        let reduce = leaves[0].with_sources(src);
        let v = Lanewise::vector_of(&reduce, &l2, w, caps)?;
        lanes.extend((0..w).map(|i| gep(&v, i)));
    }
    Some(lanes)
}

/// A fresh `UPCAST` range of `size` lanes.
fn lane_range(size: usize, next_axis: &mut usize) -> Arc<UOp> {
    *next_axis += 1;
    UOp::range(&UOp::index(size as i64), *next_axis - 1, AxisType::Upcast)
}

/// The value `V` of lane range `l` (of `leaves.len()` lanes) whose lane
/// `u` is the value of `leaves[u]` (step 1 of the module docs), if the
/// leaves are such lanes.
fn lane_value(leaves: &[Arc<UOp>], l: &Arc<UOp>) -> Option<Arc<UOp>> {
    let value = generalize(leaves[0].s(0), leaves[1].s(0), l)?;
    let simplify = |x: &Arc<UOp>| crate::symbolic::simplify(x).ok();
    for (u, leaf) in leaves.iter().enumerate() {
        let at = value.substitute(&HashMap::from([(l.id(), UOp::index(u as i64))]));
        if !Arc::ptr_eq(&simplify(&at)?, &simplify(leaf.s(0))?) {
            return None;
        }
    }
    Some(value)
}

/// `V` with `V[l := 0] = a` and `V[l := 1] = b` up to simplification:
/// `a` where the two graphs agree, `x + l` where `b` has `x + 1` (or
/// `y + (k+1)` for `a`'s `y + k`) in `a`'s place `x`; `None` where they
/// differ otherwise. A hand-written walk over node pairs with an explicit
/// stack (two graphs at once, which `UOp::substitute` cannot walk).
fn generalize(a: &Arc<UOp>, b: &Arc<UOp>, l: &Arc<UOp>) -> Option<Arc<UOp>> {
    let mut done: HashMap<(u64, u64), Arc<UOp>> = HashMap::new();
    let mut stack = vec![(a.clone(), b.clone(), false)];
    while let Some((x, y, expanded)) = stack.pop() {
        let key = (x.id(), y.id());
        if done.contains_key(&key) {
            continue;
        }
        if Arc::ptr_eq(&x, &y) {
            done.insert(key, x);
        } else if one_more(&x, &y) {
            done.insert(key, x.add(l));
        } else if x.op() != y.op()
            || x.arg() != y.arg()
            || x.dtype() != y.dtype()
            || x.src().len() != y.src().len()
        {
            return None;
        } else if expanded {
            let src: Srcs = x
                .src()
                .iter()
                .zip(y.src())
                .map(|(p, q)| done[&(p.id(), q.id())].clone())
                .collect();
            done.insert(key, x.with_sources(src));
        } else {
            stack.push((x.clone(), y.clone(), true));
            stack.extend(
                x.src()
                    .iter()
                    .zip(y.src())
                    .map(|(p, q)| (p.clone(), q.clone(), false)),
            );
        }
    }
    done.remove(&(a.id(), b.id()))
}

/// Whether index `y` is index `x` plus one: `y = x + 1`, or `x = z + k`
/// and `y = z + (k+1)` for a constant `k`.
fn one_more(x: &Arc<UOp>, y: &Arc<UOp>) -> bool {
    if x.dtype() != DType::INDEX || y.op() != Op::Add {
        return false;
    }
    let int = |n: &Arc<UOp>| n.const_int();
    if Arc::ptr_eq(y.s(0), x) && int(y.s(1)) == Some(1) {
        return true;
    }
    x.op() == Op::Add
        && Arc::ptr_eq(x.s(0), y.s(0))
        && matches!((int(x.s(1)), int(y.s(1))), (Some(k), Some(k1)) if k1 == k + 1)
}

#[cfg(test)]
mod tests {
    use crate::caps::Caps;
    use crate::lower::{lower, LowerOptions, LoweredKernel};
    use crate::opt::tests::{cpu, row_reduce, softmax};
    use crate::opt::{apply_opts, Opt, OptOps};
    use crate::uop::{Op, ReduceOp, UOp};
    use std::sync::Arc;

    /// `ast` with `opts`, lowered for `bytes`-byte vectors (with masks).
    fn lowered(ast: &Arc<UOp>, opts: &[Opt], bytes: u16) -> LoweredKernel {
        let out = apply_opts(ast, opts, cpu()).unwrap();
        let caps = Caps::all_native()
            .with_vector_bytes(bytes)
            .with_vector_masks();
        lower(&out, &LowerOptions::new(caps)).unwrap()
    }

    /// The accumulators' lane counts.
    fn accumulators(k: &LoweredKernel) -> Vec<u16> {
        k.ops
            .iter()
            .filter(|n| n.op() == Op::DefineReg)
            .map(|n| n.dtype().pointee().count())
            .collect()
    }

    #[test]
    fn partials_accumulate_in_vectors_of_the_host_lanes() {
        let p16 = [Opt::new(OptOps::Partials, 0, 16)];
        let sum = row_reduce(ReduceOp::Add, 3, 16 * 5);
        assert_eq!(accumulators(&lowered(&sum, &p16, 64)), vec![16]);
        // 32-byte vectors: two of 8; no vectors: 16 scalars
        assert_eq!(accumulators(&lowered(&sum, &p16, 32)), vec![8, 8]);
        assert_eq!(accumulators(&lowered(&sum, &p16, 0)), vec![1; 16]);
        // 4 partials on 64-byte vectors: one vector of 4
        let p4 = [Opt::new(OptOps::Partials, 0, 4)];
        assert_eq!(accumulators(&lowered(&sum, &p4, 64)), vec![4]);
        // the lanes are read with vector loads
        let k = lowered(&sum, &p16, 64);
        let loads = |n: &Arc<UOp>| n.op() == Op::Load && crate::lower::indexes_global(n.s(0));
        assert!(k
            .ops
            .iter()
            .filter(|n| loads(n))
            .all(|n| n.dtype().count() == 16));
    }

    #[test]
    fn softmax_sums_vector_exps_in_vector_accumulators() {
        let sm = softmax(4, 256);
        let opts = [
            Opt::new(OptOps::Partials, 0, 16),
            Opt::new(OptOps::Partials, 1, 16),
        ];
        let k = lowered(&sm, &opts, 64);
        // the max and the sum of exps: one 16-lane accumulator each
        assert_eq!(accumulators(&k), vec![16, 16]);
        // the summed exps are the vector decomposition, not one call per
        // lane: the only exp left is the output's (its axis is not upcast)
        let exps = k
            .ops
            .iter()
            .filter(|n| matches!(n.op(), Op::Exp | Op::Exp2));
        assert_eq!(exps.count(), 1);
    }

    #[test]
    fn other_sums_of_reduces_stay_scalar() {
        // a + b over the same range, with different values: not lanes
        use crate::lower::tests::{load, range};
        use crate::uop::AxisType;
        let i = range(3, 0, AxisType::Loop);
        let r = range(64, 1, AxisType::Reduce);
        let idx = i.mul(&UOp::index(64)).add(&r);
        let a = load(1, &idx).reduce(ReduceOp::Add, std::slice::from_ref(&r));
        let b = load(2, &idx).reduce(ReduceOp::Add, std::slice::from_ref(&r));
        let st = UOp::define_global(0, crate::dtype::DType::F32)
            .index_into(&i, None)
            .store(&a.add(&b));
        let ast = UOp::sink(vec![st.end(&[i])]);
        assert_eq!(accumulators(&lowered(&ast, &[], 64)), vec![1, 1]);
    }
}
