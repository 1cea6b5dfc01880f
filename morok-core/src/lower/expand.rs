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
//! What it buys: the lanes' values share every load and computation that
//! does not depend on the lane (hash-consing merges them), and their
//! reductions become independent accumulators updated in one loop (see
//! [`super::reduce`]): a register tile for a matmul, the C compiler's
//! vectorizer sees the lanes side by side.

use crate::uop::{AxisType, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Expands the `UPCAST` ranges of every root of the SINK `ast` (see the
/// module docs). Roots without upcast ranges are kept as they are.
pub fn expand_upcasts(ast: &Arc<UOp>) -> Arc<UOp> {
    let mut roots: Srcs = Srcs::new();
    let mut changed = false;
    for root in ast.src() {
        if root.op() != Op::End {
            roots.push(root.clone());
            continue;
        }
        let (upcast, keep): (Vec<Arc<UOp>>, Vec<Arc<UOp>>) = root.src()[1..]
            .iter()
            .cloned()
            .partition(|r| r.axis_type() == Some(AxisType::Upcast) && r.range_size().is_some());
        if upcast.is_empty() {
            roots.push(root.clone());
            continue;
        }
        changed = true;
        let store = root.s(0);
        for map in &lane_maps(&upcast) {
            roots.push(store.substitute(map).end(&keep));
        }
    }
    if changed {
        ast.with_sources(roots)
    } else {
        ast.clone()
    }
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
    use crate::lower::{lower, LowerOptions};
    use crate::opt::{apply_opts, Opt, OptLimits, OptOps};
    use crate::uop::{Op, UOp};
    use std::sync::Arc;

    fn matmul_tiled(fma: bool) -> crate::lower::LoweredKernel {
        let mm = crate::opt::tests::matmul(8, 12, 8);
        let opts = [
            Opt::new(OptOps::Upcast, 1, 4),
            Opt::new(OptOps::Upcast, 0, 2),
            Opt::new(OptOps::Unroll, 0, 3),
        ];
        let tiled = apply_opts(&mm, &opts, OptLimits::host_cpu()).unwrap();
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
        let loads = count(&k, |n| {
            n.op() == Op::Load && crate::lower::indexes_global(n.s(0))
        });
        assert_eq!(loads, 3 * (2 + 4));
    }

    #[test]
    fn fma_accumulates_through_mulacc() {
        let k = matmul_tiled(true);
        assert_eq!(count(&k, |n| n.op() == Op::MulAcc), 8 * 3);
    }
}
