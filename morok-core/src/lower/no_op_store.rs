//! Stores that write back what they just read disappear.
//!
//! `STORE(INDEX(p, i[, g]), LOAD(INDEX(p, i[, g])))` (the same interned
//! `INDEX` node, so the same buffer, offset and gate) writes each element
//! the value it already holds, provided nothing else writes that buffer
//! while the kernel runs: then no store can come between the load and the
//! store, whatever the order of iterations or threads, and a gate that is
//! false skips both (the load's zero is never written). So the rule asks
//! that the store be the kernel's only store into its buffer, and removes
//! its root (`STORE` or `END(STORE, ranges...)`) from the kernel's `SINK`.
//!
//! The rule matches the `SINK`, not the `STORE`: the condition is about the
//! kernel's other roots, which only the `SINK` sees, and removing a root
//! keeps the AST well-formed (a `SINK` of stores). It looks at the `SINK`'s
//! operands only (no walk of the graph). A kernel whose every store is a
//! no-op becomes an empty `SINK`, which lowers to a program that does
//! nothing; its buffer slots are still those of the kernel as written
//! ([`super::slots::buffer_slots`] takes them from the original AST), so
//! the caller passes the same buffers.
//!
//! It runs with the symbolic rules (`super::lower`), so the index and the
//! stored value are simplified first: `STORE(p[i + 0], LOAD(p[i]) * 1)`
//! is found as well.

use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The `STORE` of a kernel root (`STORE` or `END(STORE, ranges...)`).
fn store_of(root: &Arc<UOp>) -> &Arc<UOp> {
    if root.op() == Op::End {
        root.s(0)
    } else {
        root
    }
}

/// The buffer (`DEFINE_GLOBAL` node id) a kernel root stores into.
fn target_buffer(root: &Arc<UOp>) -> Option<u64> {
    let store = store_of(root);
    (store.op() == Op::Store).then(|| store.s(0).s(0).id())
}

/// True if the root stores a load of its own address.
fn writes_back_its_load(root: &Arc<UOp>) -> bool {
    let store = store_of(root);
    store.op() == Op::Store && {
        let value = store.s(1);
        value.op() == Op::Load && Arc::ptr_eq(value.s(0), store.s(0))
    }
}

/// `sink` without its no-op stores (see the module docs); `None` when it
/// has none.
fn without_no_op_stores(sink: &Arc<UOp>) -> Option<Arc<UOp>> {
    if !sink.src().iter().any(writes_back_its_load) {
        return None;
    }
    let mut stores_per_buffer: HashMap<u64, usize> = HashMap::new();
    for root in sink.src() {
        if let Some(b) = target_buffer(root) {
            *stores_per_buffer.entry(b).or_default() += 1;
        }
    }
    let sole_store =
        |root: &Arc<UOp>| target_buffer(root).is_some_and(|b| stores_per_buffer[&b] == 1);
    let kept: Vec<Arc<UOp>> = sink
        .src()
        .iter()
        .filter(|root| !(writes_back_its_load(root) && sole_store(root)))
        .cloned()
        .collect();
    (kept.len() < sink.src().len()).then(|| UOp::sink(kept))
}

/// The rule: a kernel `SINK` loses the roots that store a load of their
/// own address into a buffer nothing else in the kernel writes.
pub fn no_op_stores() -> PatternMatcher {
    patterns! {
        @name "no_op_stores";
        sink @ Sink(..) => without_no_op_stores(sink),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{load, range};
    use super::super::{lower, LowerOptions};
    use crate::caps::Caps;
    use crate::dtype::DType;
    use crate::interp::run_kernel;
    use crate::uop::{AxisType, Op, UOp};
    use std::sync::Arc;

    fn store(slot: i64, idx: &Arc<UOp>, v: &Arc<UOp>) -> Arc<UOp> {
        UOp::define_global(slot, v.dtype())
            .index_into(idx, None)
            .store(v)
    }

    /// Global stores left in the lowered program.
    fn stores(ast: &Arc<UOp>) -> usize {
        let k = lower(ast, &LowerOptions::new(Caps::all_native())).expect("lowers");
        k.ops
            .iter()
            .filter(|u| u.op() == Op::Store && crate::kernel::indexes_global(u.s(0)))
            .count()
    }

    /// The kernel before and after the rule set lowering runs agree on
    /// `buffers` under the reference interpreter.
    fn same_results(ast: &Arc<UOp>, buffers: &[Vec<f64>]) {
        let mut pm = crate::symbolic::symbolic();
        pm.extend(&super::no_op_stores());
        let rewritten = crate::rewrite::graph_rewrite(&pm, ast, &mut ()).expect("rewrites");
        let (mut before, mut after) = (buffers.to_vec(), buffers.to_vec());
        run_kernel(ast, &mut before).expect("runs");
        run_kernel(&rewritten, &mut after).expect("runs");
        assert_eq!(before, after, "\n{}", rewritten.tree());
    }

    fn data(n: usize, seed: f64) -> Vec<f64> {
        // Values an f32 buffer holds exactly, so a store changes none.
        (0..n)
            .map(|i| ((i as f64 + seed) * 7.3).sin() as f32 as f64)
            .collect()
    }

    #[test]
    fn a_store_of_its_own_load_disappears() {
        // p[i] = p[i] * 1 (a no-op once simplified); q[i] = 2 * p[i].
        let i = range(8, 0, AxisType::Loop);
        let p = load(0, &i);
        let noop = store(0, &i.add_const(0), &p.mul(&UOp::const_f64(DType::F32, 1.0)));
        let twice = store(1, &i, &p.mul(&UOp::const_f64(DType::F32, 2.0)));
        let ast = UOp::sink(vec![noop.end(std::slice::from_ref(&i)), twice.end(&[i])]);
        assert_eq!(stores(&ast), 1);
        let k = lower(&ast, &LowerOptions::new(Caps::all_native())).unwrap();
        assert_eq!(k.buffers.len(), 2);
        assert!(k.buffers[0].read && !k.buffers[0].written);
        same_results(&ast, &[data(8, 0.0), data(8, 1.0)]);
    }

    #[test]
    fn a_kernel_of_no_op_stores_becomes_empty_and_keeps_its_slots() {
        let i = range(8, 0, AxisType::Loop);
        let ast = UOp::sink(vec![store(0, &i, &load(0, &i)).end(&[i])]);
        let k = lower(&ast, &LowerOptions::new(Caps::all_native())).unwrap();
        assert!(k.ops.is_empty(), "{:?}", k.ops);
        assert_eq!(k.buffers.len(), 1);
        assert!(!k.buffers[0].read && !k.buffers[0].written);
        assert_eq!(k.buffers[0].dtype, DType::F32);
        same_results(&ast, &[data(8, 2.0)]);
    }

    #[test]
    fn a_store_beside_another_store_to_its_buffer_stays() {
        // p[i] = p[i] and p[7 - i] = p[i] * 3: the second store may change
        // what the first reads, so the first is not a no-op.
        let i = range(8, 0, AxisType::Loop);
        let back = store(0, &i, &load(0, &i));
        let other = store(
            0,
            &UOp::index(7).sub(&i),
            &load(0, &i).mul(&UOp::const_f64(DType::F32, 3.0)),
        );
        let ast = UOp::sink(vec![back.end(std::slice::from_ref(&i)), other.end(&[i])]);
        assert_eq!(stores(&ast), 2);
        same_results(&ast, &[data(8, 3.0)]);
    }

    #[test]
    fn a_store_of_another_address_stays() {
        // p[i] = p[(i + 1) % 8] copies, it is not a no-op.
        let i = range(8, 0, AxisType::Loop);
        let shifted = i.add_const(1).bin(Op::Mod, &UOp::index(8));
        let ast = UOp::sink(vec![store(0, &i, &load(0, &shifted)).end(&[i])]);
        assert_eq!(stores(&ast), 1);
        same_results(&ast, &[data(8, 4.0)]);
    }
}
