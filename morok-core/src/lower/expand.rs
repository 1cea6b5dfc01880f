//! Upcast expansion: every `UPCAST` range (an output axis the optimizer
//! split off, see `crate::opt`) is replaced by its lanes.
//!
//! `END(STORE(idx, v), r..., u)` with `u` an `UPCAST` range of constant
//! size `s` becomes `s` roots `END(STORE(idx[u:=c], v[u:=c]), r...)` for
//! `c = 0..s` (a bare `STORE` when no range is left). Several upcast
//! ranges expand to the product of their lanes, in lane order. Correct
//! because the kernel AST contract makes distinct iterations of the
//! output ranges store distinct elements: each lane stores what the
//! iteration `u = c` stored, and nothing else changes.
//!
//! On a target with vectors (`Caps::vector_bytes`), one upcast range of
//! each store, the one the stored index steps through with stride 1,
//! is cut into vectors instead: per piece of [`vector_pieces`] (`n`
//! vectors of `w` lanes from lane `o`), `u := o + c·w + l` for
//! `c = 0..n`, where `l` is a fresh `UPCAST` range of size `w` (a *lane
//! range*: no `END` closes it). [`super::vectorize`] later turns every
//! node that depends on `l` into one vector op (or its `w` scalar lanes),
//! so `l` never becomes a loop. The pieces take the widest power of two
//! that fits the stored type's vector register and what is left of `s`,
//! down to 16 bytes, the rest scalar lanes (`u := o + c`, no lane range;
//! 10 `f32` lanes: a vector of 8 and 2 scalars); every lane is still
//! stored exactly once.
//!
//! What it buys: the lanes' values share every load and computation that
//! does not depend on the lane (hash-consing merges them), and their
//! reductions become independent accumulators updated in one loop (see
//! [`super::reduce`]): a register tile for a matmul, whose rows along the
//! contiguous axis are vectors.

use crate::caps::Caps;
use crate::kernel::{indexes_global, next_axis_id, vector_pieces, VectorPiece};
use crate::symbolic::linear::{Expand, Linear};
use crate::uop::{AxisType, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Expands the `UPCAST` ranges of every root of the SINK `ast` (see the
/// module docs), cutting one of them per store into vector lane ranges
/// when `caps` has vectors. Roots without upcast ranges are kept as they
/// are.
pub fn expand_upcasts(ast: &Arc<UOp>, caps: &Caps) -> Arc<UOp> {
    let mut roots: Srcs = Srcs::new();
    let mut changed = false;
    let mut next_axis = next_axis_id(ast);
    for root in ast.src() {
        if root.op() != Op::End {
            roots.push(root.clone());
            continue;
        }
        let (mut upcast, keep): (Vec<Arc<UOp>>, Vec<Arc<UOp>>) = root.src()[1..]
            .iter()
            .cloned()
            .partition(|r| r.axis_type() == Some(AxisType::Upcast) && r.range_size().is_some());
        if upcast.is_empty() {
            roots.push(root.clone());
            continue;
        }
        changed = true;
        let store = root.s(0);
        let Some((pos, pieces)) = vector_axis(store, &upcast, caps) else {
            for map in &lane_maps(&upcast) {
                roots.push(store.substitute(map).end(&keep));
            }
            continue;
        };
        let u = upcast.remove(pos);
        // Per piece: u := offset + chunk·w + lane (no lane for scalar
        // lanes), its chunks expanded like any upcast.
        let mut split: Vec<(Arc<UOp>, Arc<UOp>)> = Vec::new();
        for piece in &pieces {
            let chunks = UOp::range(&UOp::index(piece.count), next_axis, AxisType::Upcast);
            let mut at = UOp::index(piece.offset).add(&chunks.mul(&UOp::index(piece.width)));
            if piece.width > 1 {
                let lane = UOp::range(&UOp::index(piece.width), next_axis + 1, AxisType::Upcast);
                at = at.add(&lane);
            }
            next_axis += 2;
            split.push((chunks, store.substitute(&HashMap::from([(u.id(), at)]))));
        }
        for map in &lane_maps(&upcast) {
            for (chunks, piece_store) in &split {
                for chunk in lane_maps(std::slice::from_ref(chunks)) {
                    let mut map = map.clone();
                    map.extend(chunk);
                    roots.push(piece_store.substitute(&map).end(&keep));
                }
            }
        }
    }
    if changed {
        ast.with_sources(roots)
    } else {
        ast.clone()
    }
}

/// The upcast range (position in `upcast`) to cut into vectors for
/// `store`, and its [`VectorPiece`]s: the first range whose index in the
/// stored address has coefficient 1 (its lanes are consecutive
/// elements) and no other occurrence, unless its lanes fill no whole
/// vector and [`reduction_operand_axis`] finds one that does, cut by
/// [`vector_pieces`] for
/// vectors of the stored type. `None` without vectors, without such a
/// range, or when it is narrower than the narrowest vector.
fn vector_axis(
    store: &Arc<UOp>,
    upcast: &[Arc<UOp>],
    caps: &Caps,
) -> Option<(usize, Vec<VectorPiece>)> {
    if store.op() != Op::Store {
        return None;
    }
    let scalar = store.s(1).dtype().scalar_type();
    let lanes = i64::from(caps.vector_lanes(scalar));
    let index = store.s(0);
    if lanes < 2 || index.op() != Op::Index || !indexes_global(index) {
        return None;
    }
    let stored = upcast.iter().position(|u| unit_stride(index.s(1), u));
    let whole = |p: &usize| upcast[*p].range_size().is_some_and(|s| s % lanes == 0);
    let pos = match stored {
        Some(p) if whole(&p) => p,
        _ => reduction_operand_axis(store.s(1), upcast, lanes).or(stored)?,
    };
    if gated_per_lane(store.s(1), &upcast[pos]) {
        return None;
    }
    let pieces = vector_pieces(upcast[pos].range_size()?, lanes, scalar.itemsize())?;
    Some((pos, pieces))
}

/// Where no upcast range contiguous in the store fills whole vectors: the
/// first whose
/// size is a multiple of `lanes` along which a load inside a `REDUCE` of
/// `value` steps with stride 1 (a convolution's weights with the output
/// channels innermost, stored into a feature map of 7×7 outputs a
/// channel). Its lanes become vectors all the same: the reduction's
/// operand is one vector load per step and its accumulators are vectors
/// (a register tile, see `crate::opt::heuristic`); the store of each
/// lane, once per output after the reduction, is a scalar store
/// ([`super::vectorize`] splits a store whose lanes are not consecutive).
fn reduction_operand_axis(value: &Arc<UOp>, upcast: &[Arc<UOp>], lanes: i64) -> Option<usize> {
    let loads: Vec<Arc<UOp>> = value
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Reduce)
        .flat_map(|red| red.s(0).toposort())
        .filter(|n| n.op() == Op::Index && indexes_global(n))
        .collect();
    upcast.iter().position(|u| {
        u.range_size().is_some_and(|s| s % lanes == 0)
            && loads.iter().any(|idx| unit_stride(idx.s(1), u))
    })
}

/// Whether some access in `value` has a gate that varies with `r` (a
/// padded convolution's border test, say). Such lanes would be gathered
/// one by one behind per-lane gates, which measured slower than the
/// scalar lanes the C compiler schedules itself (conv2d 3×3: 118 ms vs
/// 72 ms), so the store keeps scalar lanes.
fn gated_per_lane(value: &Arc<UOp>, r: &Arc<UOp>) -> bool {
    value.toposort().iter().any(|n| {
        n.op() == Op::Index
            && n.src()[2..]
                .iter()
                .any(|g| g.toposort().iter().any(|x| Arc::ptr_eq(x, r)))
    })
}

/// Whether the index expression `idx` is `base + r` with `r` absent from
/// `base` (as a linear form): consecutive values of `r` address
/// consecutive elements.
pub fn unit_stride(idx: &Arc<UOp>, r: &Arc<UOp>) -> bool {
    let Some(lin) = Linear::of(idx, Expand::AddSubNegMul, 64) else {
        return false;
    };
    let mut found = false;
    for (t, c) in &lin.terms {
        if Arc::ptr_eq(t, r) {
            found = *c == 1;
        } else if t.toposort().iter().any(|n| Arc::ptr_eq(n, r)) {
            return false;
        }
    }
    found
}

/// Every assignment of constants to `ranges` (constant sizes), the last
/// range varying fastest: the order nested loops would visit them.
pub fn lane_maps(ranges: &[Arc<UOp>]) -> Vec<HashMap<u64, Arc<UOp>>> {
    let mut out = vec![HashMap::new()];
    for r in ranges {
        let n = r.range_size().unwrap_or(1);
        out = out
            .into_iter()
            .flat_map(|m| {
                (0..n).map(move |c| {
                    let mut m = m.clone();
                    m.insert(r.id(), UOp::index(c));
                    m
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::caps::Caps;
    use crate::kernel::indexes_global;
    use crate::lower::{lower, LowerOptions};
    use crate::opt::{apply_opts, Opt, OptOps};
    use crate::target::Target;
    use crate::uop::{Op, UOp};
    use std::sync::Arc;

    fn matmul_tiled(fma: bool) -> crate::lower::LoweredKernel {
        let mm = crate::opt::tests::matmul(8, 12, 8);
        let opts = [
            Opt::new(OptOps::Upcast, 1, 4),
            Opt::new(OptOps::Upcast, 0, 2),
            Opt::new(OptOps::Unroll, 0, 3),
        ];
        let tiled = apply_opts(&mm, &opts, &Target::cpu(0, 0, 2)).unwrap();
        let mut caps = Caps::all_native();
        caps.native = caps.native.with(Op::MulAcc);
        let mut o = LowerOptions::new(caps);
        o.fma = fma;
        lower(&tiled, &o).unwrap()
    }

    fn count(k: &crate::lower::LoweredKernel, f: impl Fn(&Arc<UOp>) -> bool) -> usize {
        k.ops.iter().filter(|n| f(n)).count()
    }

    #[test]
    fn upcast_lanes_share_one_reduce_loop() {
        let k = matmul_tiled(false);
        // i/2, j/4 and k/3 loops only: lanes and the unrolled k part are gone
        assert_eq!(count(&k, |n| n.op() == Op::Range), 3);
        // a 2×4 register tile
        assert_eq!(count(&k, |n| n.op() == Op::DefineReg), 8);
        assert_eq!(count(&k, |n| n.op() == Op::MulAcc), 0);
        // per k step: 2 rows of A and 4 columns of B, 3 unrolled steps
        let loads = count(&k, |n| n.op() == Op::Load && indexes_global(n.s(0)));
        assert_eq!(loads, 3 * (2 + 4));
    }

    #[test]
    fn vector_pieces_take_the_widest_vectors_that_fit() {
        use crate::kernel::{vector_pieces, VectorPiece};
        let piece = |offset, width, count| VectorPiece {
            offset,
            width,
            count,
        };
        let cases = [
            (10, 16, 4, Some(vec![piece(0, 8, 1), piece(8, 1, 2)])),
            (12, 8, 4, Some(vec![piece(0, 8, 1), piece(8, 4, 1)])),
            (48, 16, 4, Some(vec![piece(0, 16, 3)])),
            (56, 16, 4, Some(vec![piece(0, 16, 3), piece(48, 8, 1)])),
            (7, 16, 4, Some(vec![piece(0, 4, 1), piece(4, 1, 3)])),
            (6, 8, 8, Some(vec![piece(0, 4, 1), piece(4, 2, 1)])),
            (2, 16, 4, None),
            (8, 1, 4, None),
        ];
        for (size, lanes, itemsize, want) in cases {
            assert_eq!(
                vector_pieces(size, lanes, itemsize),
                want,
                "{size} on {lanes} lanes of {itemsize} bytes"
            );
        }
    }

    #[test]
    fn fma_accumulates_through_mulacc() {
        let k = matmul_tiled(true);
        assert_eq!(count(&k, |n| n.op() == Op::MulAcc), 8 * 3);
    }
}
