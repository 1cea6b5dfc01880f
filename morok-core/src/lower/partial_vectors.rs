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
//! 3. each leaf `Pᵤ` of the tree is replaced by `GEP(chunk u/w, u mod w)`;
//! 4. where the order of the reduction may change (`reorderable`, see
//!    the "Float order" docs of `crate::opt::reduce_strategy`) and
//!    optional optimizations are on, the tree's root is replaced by a
//!    combine on vectors: the chunks folded pairwise with vector ops
//!    (neighbours first), then the lanes of the one vector left halved
//!    until one is left, each step `⊕` of its low and its high half (two
//!    `GEP`s of several lanes): `log₂ w` vector ops instead of `amt`
//!    lane extracts and `amt − 1` scalar ops.
//!
//! Steps 1–3 are bit-identical: lane `i` of chunk `c` accumulates exactly
//! what `P_{c·w+i}` accumulated, in the same order (step 1 checks this),
//! and the tree that combines the lanes after the loop is kept as it was.
//! Step 4 combines the same `amt` partial results in another balanced
//! order: lane `i` of `chunk₀ ⊕ chunk₁` is `P_i ⊕ P_{w+i}`, the halving
//! then adds lanes `w/2` apart, and so on. For an associative,
//! commutative `⊕` this is the same value; for `f32`/`f64` sums and
//! products it is another blocked summation with the same error bound as
//! the tree `PARTIALS` built (and `max`/`min` are exact in any order).
//! Under `MOROK_NOOPT=1` (`LowerOptions::noopt`) the tree is kept.
//!
//! The walk over the trees is hand-written: a tree is recognized from its
//! leaves up, which a `graph_rewrite` rule (one node at a time) cannot see.

use super::vectorize::Lanewise;
use crate::caps::{is_vector_element, Caps};
use crate::dtype::DType;
use crate::kernel::{combine_pairwise, next_axis_id, reorderable};
use crate::symbolic::vector::gep;
use crate::uop::{Arg, AxisType, Op, ReduceOp, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Gives the partial accumulators of every `PARTIALS` tree in `g` as
/// vectors (see the module docs), combining them on vectors where
/// `reorder` allows (step 4). Graphs without such trees, and targets
/// without vectors, are returned as they are.
pub fn vectorize_partials(g: &Arc<UOp>, caps: &Caps, reorder: bool) -> Arc<UOp> {
    let order = g.toposort();
    let mut leaves: HashMap<u64, Vec<Arc<UOp>>> = HashMap::new();
    for n in &order {
        if let Some(l) = tree_leaves(n, &leaves) {
            leaves.insert(n.id(), l);
        }
    }
    // The largest trees first (a subtree of a chosen tree is not one).
    let mut next_axis = next_axis_id(g);
    let mut taken: HashSet<u64> = HashSet::new();
    let mut chosen: Vec<(&Arc<UOp>, &[Arc<UOp>])> = Vec::new();
    for n in order.iter().rev() {
        let Some(l) = leaves.get(&n.id()) else {
            continue;
        };
        if l.len() < 2 || l.iter().any(|x| taken.contains(&x.id())) {
            continue;
        }
        if lane_value(l, &lane_range(l.len(), &mut next_axis)).is_some() {
            taken.extend(l.iter().map(|x| x.id()));
            chosen.push((n, l));
        }
    }
    // Inner trees first: a tree's leaves may hold an inner tree (softmax's
    // sum of exps holds the max), which they then read as vector lanes.
    // `combined` maps each tree as it reads after `map` (the node, kept
    // alive in `trees` so that substituting `map` into `g` finds the same
    // node) to its vector combine, built from chunks whose inner trees
    // are combined too. It is substituted after `map`: inside the chunks the
    // leaves' values were simplified, which would take a combine apart
    // into lanes again.
    let mut map: HashMap<u64, Arc<UOp>> = HashMap::new();
    let mut combined: HashMap<u64, Arc<UOp>> = HashMap::new();
    let mut trees: Vec<Arc<UOp>> = Vec::new();
    for (root, l) in chosen.into_iter().rev() {
        let inner: Vec<Arc<UOp>> = l.iter().map(|x| x.substitute(&map)).collect();
        let Some(chunks) = vector_chunks(&inner, caps, &mut next_axis) else {
            continue;
        };
        let lanes = chunks
            .iter()
            .flat_map(|v| (0..v.dtype().count() as usize).map(|i| gep(v, &[i])));
        map.extend(l.iter().map(|x| x.id()).zip(lanes));
        let Arg::Reduce(op) = *l[0].arg() else {
            continue;
        };
        if !reorder || !reorderable(op, l[0].dtype()) {
            continue;
        }
        let chunks = chunks.iter().map(|c| c.substitute(&combined)).collect();
        if let Some(c) = combine_lanes(op, chunks) {
            let tree = root.substitute(&map);
            combined.insert(tree.id(), c);
            trees.push(tree);
        }
    }
    if map.is_empty() {
        return g.clone();
    }
    let g = g.substitute(&map).substitute(&combined);
    drop(trees);
    g
}

/// `op` over every lane of `chunks` (vectors of a power-of-two lane
/// count, step 4 of the module docs): the chunks folded pairwise, then
/// the lanes halved, `lo ⊕ hi` of the low and the high half of the
/// lanes, until one lane is left. `None` for no chunks.
fn combine_lanes(op: ReduceOp, chunks: Vec<Arc<UOp>>) -> Option<Arc<UOp>> {
    let mut v = combine_pairwise(op, chunks)?;
    while v.dtype().count() > 1 {
        let half = v.dtype().count() as usize / 2;
        let lo: Vec<usize> = (0..half).collect();
        let hi: Vec<usize> = (half..2 * half).collect();
        v = gep(&v, &lo).bin(op.alu(), &gep(&v, &hi));
    }
    Some(v)
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

/// For the leaves `Pᵤ` of one tree: the vector reduces of `w` lanes each
/// whose lanes, in order, equal them (steps 1 and 2 of the module docs),
/// or `None`.
fn vector_chunks(leaves: &[Arc<UOp>], caps: &Caps, next_axis: &mut usize) -> Option<Vec<Arc<UOp>>> {
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
    (0..amt / w)
        .map(|c| {
            let at = l2.add(&UOp::index((c * w) as i64));
            let chunk = simplify(&value.substitute(&HashMap::from([(l.id(), at)])))?;
            let mut src: Srcs = leaves[0].src().iter().cloned().collect();
            src[0] = chunk;
            let reduce = leaves[0].with_sources(src);
            Lanewise::vector_of(&reduce, &l2, w, caps)
        })
        .collect()
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
        let out = apply_opts(ast, opts, &cpu()).unwrap();
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
        let loads = |n: &Arc<UOp>| n.op() == Op::Load && crate::kernel::indexes_global(n.s(0));
        assert!(k
            .ops
            .iter()
            .filter(|n| loads(n))
            .all(|n| n.dtype().count() == 16));
    }

    /// Lanes read one at a time (`GEP`s of one lane) and lane groups read
    /// as narrower vectors (`GEP`s of several).
    fn lane_reads(k: &LoweredKernel) -> (usize, usize) {
        let geps = k.ops.iter().filter(|n| n.op() == Op::Gep);
        geps.fold((0, 0), |(one, many), n| match n.dtype().count() {
            1 => (one + 1, many),
            _ => (one, many + 1),
        })
    }

    #[test]
    fn partials_combine_by_vector_adds_and_halving() {
        let p32 = [Opt::new(OptOps::Partials, 0, 32)];
        let sum = row_reduce(ReduceOp::Add, 3, 32 * 5);
        // two vectors of 16: one vector add, then 16 → 8 → 4 → 2 lanes
        // (two halves each) and one scalar add of the last two lanes
        let k = lowered(&sum, &p32, 64);
        assert_eq!(lane_reads(&k), (2, 6));
        let vector_adds = k
            .ops
            .iter()
            .filter(|n| n.op() == Op::Add && n.dtype().count() > 1);
        // the two in the loop, one of the accumulators, three halvings
        assert_eq!(vector_adds.count(), 6);
        // four vectors of 8 (32-byte vectors), and a max: the same shape
        assert_eq!(lane_reads(&lowered(&sum, &p32, 32)), (2, 4));
        let max = row_reduce(ReduceOp::Max, 3, 32 * 5);
        assert_eq!(lane_reads(&lowered(&max, &p32, 64)), (2, 6));
        // without optional optimizations the tree of lanes stays
        let out = apply_opts(&sum, &p32, &cpu()).unwrap();
        let mut o = LowerOptions::new(Caps::all_native().with_vector_bytes(64));
        o.noopt = true;
        assert_eq!(lane_reads(&lower(&out, &o).unwrap()), (32, 0));
    }

    #[test]
    fn nested_trees_read_the_inner_combine() {
        // softmax's sum of exps holds the max, layernorm's variance the
        // mean: each tree is combined once, the outer value reads the
        // inner combine (two lanes read singly per tree, no scalar copy)
        let sm = softmax(4, 256);
        let p = |axis| Opt::new(OptOps::Partials, axis, 16);
        assert_eq!(lane_reads(&lowered(&sm, &[p(0), p(1)], 64)), (4, 12));
        let ln = crate::opt::tests::layernorm(4, 256);
        let p = |axis| Opt::new(OptOps::Partials, axis, 32);
        assert_eq!(lane_reads(&lowered(&ln, &[p(0), p(1)], 64)), (4, 12));
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
