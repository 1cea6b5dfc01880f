//! Vectorization of upcast lanes: every node that depends on a *lane
//! range* (the `UPCAST` range of `w` lanes [`super::expand`] leaves in a
//! store, see there) becomes either one op on `dtype.vec(w)` values or
//! `w` scalar nodes, one per lane; afterwards no lane range is left.
//!
//! Per node `n` of a store's graph, its `Lanes`:
//!
//! - `n` does not depend on the lane range: `n` itself, shared by every
//!   lane (a scalar broadcast where a vector needs it: a vector `CONST`
//!   for constants, `VECTORIZE(n, …, n)` otherwise);
//! - the lane range: the index constants `0..w`;
//! - `LOAD(INDEX(buf, idx))` whose index is `base + l` (lane range `l`,
//!   coefficient 1, nowhere else, no loaded data in it) and whose gate
//!   does not depend on `l`: one vector `LOAD` of `w` consecutive elements
//!   at `INDEX(buf, base)` (its dtype is the vector; no alignment is
//!   assumed). A `STORE` through such an index stores the whole vector;
//! - a lane-wise ALU op (`WHERE` only with a condition shared by every
//!   lane) or `CAST` whose result and vector operands are of a vector
//!   element type (`Caps::vector_lanes`): the same op on vectors;
//! - a `REDUCE` of such a value: a `REDUCE` of the vector (reduce
//!   lowering gives it a vector accumulator, lane `i` accumulates what the
//!   scalar lane `i` accumulated, in the same order; `MULACC` on vectors
//!   is a vector FMA);
//! - anything else (comparisons, index arithmetic, gathers of loads whose
//!   lanes are not consecutive, ...): `w` scalar nodes, each the node
//!   with the operands of its lane (`GEP(v, i)` of a vector operand).
//!   Lane `i` of a gathered vector is then `VECTORIZE` of the scalars.
//!
//! On a target with vector masks (`Caps::vector_masks`, the C renderer)
//! more stays in vector registers:
//!
//! - comparisons of vector-element operands and `AND`/`OR`/`XOR`/`NOT`
//!   of their results are `bool` vectors (masks), `WHERE` may select per
//!   lane with such a mask, and `BITCAST`s and `CAST`s from and to
//!   `bool` are vector ops too;
//! - `EXP`, `EXP2`, `LOG`, `LOG2` and `TANH` varying across lanes of at
//!   least [`min_decomposed_bytes`] are replaced by their decomposition
//!   (`super::transcendental`) before the walk, so the whole polynomial
//!   with its range reduction runs on vectors, 1.6× to 17× faster than a
//!   libm call per lane (the choice per op, measured, is at
//!   `decomposed_on_vectors`). Scalar code (values shared by the
//!   lanes, kernels without lanes) and the other ops keep libm.
//!
//! Every lane computes exactly the scalar operations the unvectorized
//! lane computes, in the same order, so results are bit-identical (with
//! vector masks: bit-identical to the scalar decomposition).
//!
//! The walk over a store's graph is hand-written: each node maps to a
//! `Lanes` value (a vector or `w` nodes), not to one node, which a
//! `graph_rewrite` rule cannot return. It iterates the store's toposort
//! (no recursion).

use super::bounds::is_data_dependent;
use super::expand::unit_stride;
use crate::caps::{is_vector_element, Caps};
use crate::uop::{Arg, AxisType, Op, OpGroup, Srcs, UOp};
use smallvec::smallvec;
use std::collections::HashMap;
use std::sync::Arc;

/// The value of one node across the lanes (see the module docs).
#[derive(Clone)]
enum Lanes {
    /// The same scalar in every lane.
    Same(Arc<UOp>),
    /// One vector node of `w` lanes.
    Vector(Arc<UOp>),
    /// One scalar node per lane.
    Each(Vec<Arc<UOp>>),
}

/// `VECTORIZE` of scalars.
fn vectorize_of(lanes: &[Arc<UOp>]) -> Arc<UOp> {
    let dtype = lanes[0].dtype().vec(lanes.len() as u16);
    UOp::new(
        Op::Vectorize,
        dtype,
        lanes.iter().cloned().collect::<Srcs>(),
        Arg::None,
    )
}

/// `GEP(v, [i])`: lane `i` of the vector `v`.
pub(super) fn gep(v: &Arc<UOp>, i: usize) -> Arc<UOp> {
    UOp::new(
        Op::Gep,
        v.dtype().base(),
        smallvec![v.clone()],
        Arg::Axes(smallvec![i]),
    )
}

impl Lanes {
    /// The value as one vector of `w` lanes.
    fn vector(&self, w: usize) -> Arc<UOp> {
        match self {
            Lanes::Vector(v) => v.clone(),
            Lanes::Each(xs) => vectorize_of(xs),
            Lanes::Same(s) => match s.const_value() {
                Some(c) => UOp::const_(s.dtype().vec(w as u16), c),
                None => vectorize_of(&vec![s.clone(); w]),
            },
        }
    }

    /// Lane `i` as a scalar.
    fn lane(&self, i: usize) -> Arc<UOp> {
        match self {
            Lanes::Same(s) => s.clone(),
            Lanes::Vector(v) => gep(v, i),
            Lanes::Each(xs) => xs[i].clone(),
        }
    }

    fn is_same(&self) -> bool {
        matches!(self, Lanes::Same(_))
    }
}

/// The lane range of a store, if any: an `UPCAST` range of constant size
/// in its graph (expansion left no other upcast range).
fn lane_range(store: &Arc<UOp>) -> Option<Arc<UOp>> {
    store.toposort().into_iter().find(|n| {
        n.op() == Op::Range && n.axis_type() == Some(AxisType::Upcast) && n.range_size().is_some()
    })
}

/// The vectorizer of one store's graph over one lane range.
pub(super) struct Lanewise {
    lane: Arc<UOp>,
    w: usize,
    /// Whether the target has vector masks (`Caps::vector_masks`).
    masks: bool,
    lanes: HashMap<u64, Lanes>,
}

/// Whether values of dtype `t` may be vector lanes: vector elements, and
/// with vector masks also `bool`.
fn lane_type(t: crate::dtype::DType, masks: bool) -> bool {
    !t.is_ptr() && (is_vector_element(t.scalar_type()) || (masks && t.is_bool()))
}

/// Whether a vector of `n`'s op and dtype exists: a vector-element
/// result, or with vector masks a `bool` result of a comparison of
/// non-`bool` values, of logic on `bool`s or of a cast.
fn vector_result(n: &Arc<UOp>, masks: bool) -> bool {
    let d = n.dtype();
    if d.is_ptr() {
        return false;
    }
    if is_vector_element(d.scalar_type()) {
        return true;
    }
    masks
        && d.is_bool()
        && match n.op() {
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe => {
                n.src().iter().all(|s| !s.dtype().is_bool())
            }
            Op::And | Op::Or | Op::Xor | Op::Not | Op::Cast | Op::Where => true,
            _ => false,
        }
}

/// The fewest bytes of lanes whose transcendentals take the
/// decomposition: on 16 `f32` lanes (64 bytes) the vector polynomial of
/// `exp` ran 2.1× faster than glibc's `expf` per lane (1.5 vs 3.1 ms per
/// 2^20 floats, AVX-512 host), on 4 lanes (16 bytes, softmax's `exp`
/// kernel) 1.5× slower, so narrower chunks keep libm.
pub const MIN_DECOMPOSED_BYTES: usize = 64;

/// The fewest bytes of lanes whose transcendentals take the decomposition
/// on a target with `caps`: [`MIN_DECOMPOSED_BYTES`], or one whole vector
/// where the target's vectors have 32 bytes (AVX2). Lowering cuts an
/// upcast into vectors of the target's width first, so on AVX2 no chunk
/// reaches 64 bytes: W3's softmax compiled for AVX2 (on a Zen 5 host,
/// `MOROK_CPU_VECTOR_BYTES=32`) took 27.9 ms with one `expf` per lane and
/// 9.8 ms with the 8-lane polynomial.
pub fn min_decomposed_bytes(caps: &Caps) -> usize {
    match caps.vector_bytes {
        32 => 32,
        _ => MIN_DECOMPOSED_BYTES,
    }
}

/// The ops whose varying lanes take their decomposition on targets with
/// vector masks (see the module docs). Chosen by measurement: glibc per
/// lane vs the vector decomposition on 2^20 values in (0, 9.3], 16 `f32`
/// or 8 `f64` lanes on an AVX-512 host, libm time ÷ vector time:
///
/// | op | f32 | f64 |
/// |---|---:|---:|
/// | exp | 2.5 | 2.6 |
/// | exp2 | 2.2 | |
/// | log | 5.3 | 1.6 |
/// | log2 | 11.8 | |
/// | tanh | 16.6 | |
/// | sin, cos | 0.05 | 0.25 |
/// | erf | 0.14 | |
///
/// `sin`/`cos` (and `tan`) evaluate the Payne–Hanek reduction on every
/// lane, `erf` works in `f64` with a long continued fraction: they keep
/// libm, as do `pow` (double-word `f64` arithmetic, not measured) and
/// `sqrt`/`rsqrt` (the compiler vectorizes `sqrt` into the vector
/// instruction, correctly rounded).
fn decomposed_on_vectors(op: Op) -> bool {
    matches!(op, Op::Exp | Op::Exp2 | Op::Log | Op::Log2 | Op::Tanh)
}

/// `store` with every float transcendental that depends on `lane` (and
/// is [`decomposed_on_vectors`]) replaced by its decomposition. A
/// hand-written walk over the toposort (like `UOp::substitute`): whether a
/// node depends on the lane range is known per node of this one graph.
fn decompose_lanes(store: &Arc<UOp>, lane: &Arc<UOp>, w: usize, caps: &Caps) -> Arc<UOp> {
    let fma = caps.native.contains(Op::MulAcc);
    let min_bytes = min_decomposed_bytes(caps);
    let mut done: HashMap<u64, (Arc<UOp>, bool)> = HashMap::new();
    for n in store.toposort() {
        let dep = Arc::ptr_eq(&n, lane) || n.src().iter().any(|s| done[&s.id()].1);
        let src: Srcs = n.src().iter().map(|s| done[&s.id()].0.clone()).collect();
        let mut new = n.with_sources(src);
        let bytes = w * n.dtype().itemsize();
        if dep
            && decomposed_on_vectors(n.op())
            && is_vector_element(n.dtype().scalar_type())
            && bytes >= min_bytes
        {
            if let Some(d) = super::transcendental::decompose(&new, fma) {
                new = d;
            }
        }
        done.insert(n.id(), (new, dep));
    }
    done[&store.id()].0.clone()
}

impl Lanewise {
    fn of(&self, n: &Arc<UOp>) -> &Lanes {
        &self.lanes[&n.id()]
    }

    /// `w` scalar nodes: `n` with the operands of each lane.
    fn each(&self, n: &Arc<UOp>) -> Lanes {
        Lanes::Each(
            (0..self.w)
                .map(|i| n.with_sources(n.src().iter().map(|s| self.of(s).lane(i)).collect()))
                .collect(),
        )
    }

    /// For an `INDEX` into a global buffer whose offset is `base + lane`
    /// (see the module docs) and whose gate is shared by the lanes: the
    /// `INDEX` of lane 0, the first of `w` consecutive elements.
    fn consecutive(&self, index: &Arc<UOp>) -> Option<Arc<UOp>> {
        let ok = index.op() == Op::Index
            && crate::kernel::indexes_global(index)
            && unit_stride(index.s(1), &self.lane)
            && !is_data_dependent(index.s(1))
            && index.src()[2..].iter().all(|g| self.of(g).is_same());
        if !ok {
            return None;
        }
        let zero = HashMap::from([(self.lane.id(), UOp::index(0))]);
        let base = index.s(1).substitute(&zero);
        let base = crate::symbolic::simplify(&base).unwrap_or(base);
        let mut src: Srcs = index.src().iter().cloned().collect();
        src[1] = base;
        Some(index.with_sources(src))
    }

    /// The lanes of `INDEX` node `n`: each lane's offset substituted and
    /// simplified, so gathers address plain element offsets.
    fn index_lanes(&self, n: &Arc<UOp>) -> Lanes {
        Lanes::Each(
            (0..self.w)
                .map(|i| {
                    let map = HashMap::from([(self.lane.id(), UOp::index(i as i64))]);
                    let lane = n.substitute(&map);
                    crate::symbolic::simplify(&lane).unwrap_or(lane)
                })
                .collect(),
        )
    }

    /// Whether `n` may become one op on vectors: its dtype is a vector
    /// element type, and so is every operand that varies across lanes.
    fn vectorizable(&self, n: &Arc<UOp>) -> bool {
        vector_result(n, self.masks)
            && n.src()
                .iter()
                .all(|s| self.of(s).is_same() || lane_type(s.dtype(), self.masks))
    }

    /// The lanes of `n`, whose operands' lanes are known.
    fn visit(&self, n: &Arc<UOp>) -> Lanes {
        let w = self.w;
        if Arc::ptr_eq(n, &self.lane) {
            return Lanes::Each((0..w as i64).map(UOp::index).collect());
        }
        match n.op() {
            Op::Index => self.index_lanes(n),
            Op::Load if n.src().len() == 1 && is_vector_element(n.dtype().scalar_type()) => {
                match self.consecutive(n.s(0)) {
                    Some(base) => Lanes::Vector(UOp::new(
                        Op::Load,
                        n.dtype().vec(w as u16),
                        smallvec![base],
                        Arg::None,
                    )),
                    None => self.each(n),
                }
            }
            Op::Reduce if self.vectorizable(n) => {
                let mut src: Srcs = n.src().iter().cloned().collect();
                src[0] = self.of(n.s(0)).vector(w);
                Lanes::Vector(UOp::new(
                    Op::Reduce,
                    n.dtype().vec(w as u16),
                    src,
                    n.arg().clone(),
                ))
            }
            Op::Where if self.vectorizable(n) && self.masks => {
                let src: Srcs = n.src().iter().map(|s| self.of(s).vector(w)).collect();
                Lanes::Vector(UOp::new(Op::Where, n.dtype().vec(w as u16), src, Arg::None))
            }
            Op::Bitcast if self.masks && self.vectorizable(n) && !n.dtype().is_bool() => {
                let src: Srcs = smallvec![self.of(n.s(0)).vector(w)];
                Lanes::Vector(UOp::new(
                    Op::Bitcast,
                    n.dtype().vec(w as u16),
                    src,
                    Arg::None,
                ))
            }
            Op::Where if self.vectorizable(n) && self.of(n.s(0)).is_same() => {
                let src: Srcs = smallvec![
                    n.s(0).clone(),
                    self.of(n.s(1)).vector(w),
                    self.of(n.s(2)).vector(w)
                ];
                Lanes::Vector(UOp::new(Op::Where, n.dtype().vec(w as u16), src, Arg::None))
            }
            op if lane_wise(op) && self.vectorizable(n) => {
                let src: Srcs = n.src().iter().map(|s| self.of(s).vector(w)).collect();
                Lanes::Vector(UOp::new(op, n.dtype().vec(w as u16), src, n.arg().clone()))
            }
            _ => self.each(n),
        }
    }

    /// Computes the lanes of every node of `root`'s graph but its
    /// `STORE`s, operands first.
    fn walk(&mut self, root: &Arc<UOp>) {
        let mut depends: HashMap<u64, bool> = HashMap::new();
        for n in root.toposort() {
            let dep = Arc::ptr_eq(&n, &self.lane) || n.src().iter().any(|s| depends[&s.id()]);
            depends.insert(n.id(), dep);
            if n.op() == Op::Store {
                continue;
            }
            let lanes = if dep {
                self.visit(&n)
            } else {
                Lanes::Same(n.clone())
            };
            self.lanes.insert(n.id(), lanes);
        }
    }

    /// The lanes of `value` over the lane range `lane` of `w` lanes as one
    /// vector node, if they become one (see the module docs); with vector
    /// masks its transcendentals take their decomposition first.
    pub(super) fn vector_of(
        value: &Arc<UOp>,
        lane: &Arc<UOp>,
        w: usize,
        caps: &Caps,
    ) -> Option<Arc<UOp>> {
        let masks = caps.vector_masks();
        let value = if masks {
            decompose_lanes(value, lane, w, caps)
        } else {
            value.clone()
        };
        let mut lw = Lanewise {
            lane: lane.clone(),
            w,
            masks,
            lanes: HashMap::new(),
        };
        lw.walk(&value);
        match lw.of(&value) {
            Lanes::Vector(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// The roots replacing `store` (`STORE(INDEX, value)`): one vector
    /// store when the index is consecutive, else one store per lane.
    fn store(&mut self, store: &Arc<UOp>) -> Vec<Arc<UOp>> {
        self.walk(store);
        let (index, value) = (store.s(0), store.s(1));
        let vector_value =
            is_vector_element(value.dtype().scalar_type()) && !value.dtype().is_bool();
        match self.consecutive(index) {
            Some(base) if vector_value && store.src().len() == 2 => {
                vec![base.store(&self.of(value).vector(self.w))]
            }
            _ => (0..self.w)
                .map(|i| {
                    let src: Srcs = store.src().iter().map(|s| self.of(s).lane(i)).collect();
                    store.with_sources(src)
                })
                .collect(),
        }
    }
}

/// Whether `op` acts on each lane independently with the scalar op's
/// semantics (the ALU ops other than `WHERE` and the random generator,
/// and value casts).
fn lane_wise(op: Op) -> bool {
    match op.group() {
        OpGroup::Unary | OpGroup::Binary => op != Op::Threefry,
        OpGroup::Ternary => op == Op::MulAcc,
        OpGroup::Cast => op == Op::Cast,
        _ => false,
    }
}

/// Vectorizes the lane range of every root of the SINK `g` (roots are
/// `END(STORE, ranges...)` or bare `STORE`s; see the module docs) for a
/// target with capabilities `caps`.
pub fn vectorize(g: &Arc<UOp>, caps: &Caps) -> Arc<UOp> {
    let masks = caps.vector_masks();
    let mut roots: Srcs = Srcs::new();
    let mut changed = false;
    for root in g.src() {
        let (store, ranges) = match root.op() {
            Op::End => (root.s(0).clone(), root.src()[1..].to_vec()),
            _ => (root.clone(), Vec::new()),
        };
        let lane = (store.op() == Op::Store)
            .then(|| lane_range(&store))
            .flatten();
        let Some(lane) = lane else {
            roots.push(root.clone());
            continue;
        };
        changed = true;
        let w = lane.range_size().unwrap_or(1) as usize;
        let store = if masks {
            decompose_lanes(&store, &lane, w, caps)
        } else {
            store
        };
        let mut lw = Lanewise {
            lane,
            w,
            masks,
            lanes: HashMap::new(),
        };
        for s in lw.store(&store) {
            roots.push(if ranges.is_empty() { s } else { s.end(&ranges) });
        }
    }
    if changed {
        g.with_sources(roots)
    } else {
        g.clone()
    }
}

#[cfg(test)]
mod tests {
    use crate::caps::Caps;
    use crate::lower::{lower, LowerOptions, LoweredKernel};
    use crate::opt::{apply_opts, Opt, OptOps};
    use crate::target::Target;
    use crate::uop::{AxisType, Op, UOp};
    use std::sync::Arc;

    /// An 8×12 (K = 8) matmul with a 2×12 tile lowered for 32-byte
    /// vectors: rows of 12 lanes are a vector of 8 (what 32 bytes hold)
    /// and one of 4 (`expand::vector_pieces`).
    fn tiled(fma: bool) -> LoweredKernel {
        let mm = crate::opt::tests::matmul(8, 8, 12);
        let opts = [
            Opt::new(OptOps::Upcast, 1, 12),
            Opt::new(OptOps::Upcast, 0, 2),
        ];
        let tiled = apply_opts(&mm, &opts, &Target::cpu(0, 0, 2)).unwrap();
        let mut caps = Caps::all_native().with_vector_bytes(32);
        caps.native = caps.native.with(Op::MulAcc);
        let mut o = LowerOptions::new(caps);
        o.fma = fma;
        lower(&tiled, &o).unwrap()
    }

    fn count(k: &LoweredKernel, f: impl Fn(&Arc<UOp>) -> bool) -> usize {
        k.ops.iter().filter(|n| f(n)).count()
    }

    #[test]
    fn upcast_rows_become_vector_loads_accumulators_and_stores() {
        let k = tiled(true);
        for lanes in [8, 4] {
            let vec = |n: &Arc<UOp>| n.dtype().pointee().count() == lanes;
            // 2 rows × 1 vector of `lanes`: vector accumulators
            assert_eq!(count(&k, |n| n.op() == Op::DefineReg && vec(n)), 2);
            // per k step: 1 vector load of B
            let global = |n: &Arc<UOp>| n.op() == Op::Load && crate::kernel::indexes_global(n.s(0));
            assert_eq!(count(&k, |n| global(n) && vec(n)), 1, "{lanes}");
            assert_eq!(count(&k, |n| n.op() == Op::MulAcc && vec(n)), 2);
            let stores =
                |n: &Arc<UOp>| n.op() == Op::Store && crate::kernel::indexes_global(n.s(0));
            assert_eq!(
                count(&k, |n| stores(n) && n.s(1).dtype().count() == lanes),
                2
            );
        }
        assert_eq!(count(&k, |n| n.op() == Op::DefineReg), 4);
        // 2 scalar loads of A (broadcast)
        let scalar_loads = count(&k, |n| {
            n.op() == Op::Load && crate::kernel::indexes_global(n.s(0)) && n.dtype().count() == 1
        });
        assert_eq!(scalar_loads, 2);
        // no lane range is left to loop over
        assert!(!k
            .ops
            .iter()
            .any(|n| n.op() == Op::Range && n.axis_type() == Some(AxisType::Upcast)));
        // without FMA the vector lanes multiply, then add
        assert_eq!(count(&tiled(false), |n| n.op() == Op::MulAcc), 0);
    }

    #[test]
    fn no_vectors_without_vector_registers() {
        let mm = crate::opt::tests::matmul(8, 8, 12);
        let tiled = apply_opts(
            &mm,
            &[Opt::new(OptOps::Upcast, 1, 4)],
            &Target::cpu(0, 0, 2),
        )
        .unwrap();
        let k = lower(&tiled, &LowerOptions::new(Caps::all_native())).unwrap();
        assert!(k.ops.iter().all(|n| !n.dtype().pointee().is_vector()));
    }
}
