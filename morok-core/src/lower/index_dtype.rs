//! Index type lowering: the abstract `Index` type becomes `i32` when every
//! index expression of the kernel provably fits in `i32`, and `i64`
//! otherwise or when the target asks for it (`Caps::index_i64`). One type
//! for the whole kernel keeps the rendered code free of mixed-width
//! casts, and `i32` loop counters vectorize best in C.

use super::bounds::Bounds;
use crate::dtype::{DType, ScalarType};
use crate::uop::{Op, Srcs, UOp};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// True if `v` lies in the range of `t`.
fn fits(v: (i128, i128), t: ScalarType) -> bool {
    v.0 >= t.min_int() && v.1 <= t.max_int()
}

/// Retypes every `Index` node of `g` to the chosen concrete type (`i64`
/// whenever `wide` is set).
///
/// Returns the new graph, the chosen type, and the ids (in the new graph)
/// of the retyped nodes that are proven never to overflow: their interval
/// fits the chosen type strictly inside its extremes (an interval equal to
/// the full type range is what the analysis answers when it cannot bound
/// a value, so it proves nothing), and for `IDIV`/`MOD` the divisor is
/// also proven positive. Renderers may emit non-wrapping arithmetic for
/// exactly these nodes.
pub fn lower_index_dtype(g: &Arc<UOp>, wide: bool) -> (Arc<UOp>, DType, HashSet<u64>) {
    let nodes = g.toposort();
    let mut bounds = Bounds::default();
    let mut all_fit = true;
    let mut intervals: HashMap<u64, (i128, i128)> = HashMap::new();
    for n in &nodes {
        if n.dtype() == DType::INDEX {
            let b = bounds.of(n);
            all_fit &= fits(b, ScalarType::I32);
            intervals.insert(n.id(), b);
        }
    }
    let target = if all_fit && !wide {
        DType::I32
    } else {
        DType::I64
    };
    let t = target.scalar_type();
    let strictly_inside = |b: (i128, i128)| b.0 > t.min_int() && b.1 < t.max_int();

    let mut done: HashMap<u64, Arc<UOp>> = HashMap::new();
    let mut no_overflow = HashSet::new();
    for n in &nodes {
        let src: Srcs = n.src().iter().map(|s| done[&s.id()].clone()).collect();
        let new = match intervals.get(&n.id()) {
            Some(b) => {
                let new = UOp::new_at(n.op(), target, src, n.arg().clone(), n.location());
                let divisor_ok = match n.op() {
                    Op::Idiv | Op::Mod => bounds.of(n.s(1)).0 > 0,
                    _ => true,
                };
                if strictly_inside(*b) && divisor_ok {
                    no_overflow.insert(new.id());
                }
                new
            }
            None => n.with_sources(src),
        };
        done.insert(n.id(), new);
    }
    (done[&g.id()].clone(), target, no_overflow)
}
