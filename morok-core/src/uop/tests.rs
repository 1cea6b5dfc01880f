use super::*;
use crate::dtype::DType;
use std::sync::Arc;

fn var(name: &str) -> Arc<UOp> {
    UOp::define_var(name, DType::INDEX, -8, 8)
}

#[test]
fn hash_consing_returns_same_arc() {
    let x = var("x");
    let y = var("y");
    let a = x.add(&y);
    let b = x.add(&y);
    assert!(Arc::ptr_eq(&a, &b));
    assert!(!Arc::ptr_eq(&a, &y.add(&x)));
}

#[test]
fn hash_consing_across_threads() {
    let x = var("threads_x");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let x = x.clone();
            std::thread::spawn(move || x.add_const(41).mul_const(3))
        })
        .collect();
    let nodes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for n in &nodes {
        assert!(Arc::ptr_eq(n, &nodes[0]));
    }
}

#[test]
fn interner_frees_unused_nodes() {
    let x = var("free_x");
    let before = interned_count();
    for i in 0..1_000_000i64 {
        let n = x.add_const(i);
        std::hint::black_box(&n);
    }
    let after = interned_count();
    // Other tests run in parallel and intern a few nodes of their own; a
    // leaking table would hold about two million more entries.
    assert!(after < before + 10_000, "before {before}, after {after}");
}

#[test]
fn deep_chain_drops_without_overflow() {
    let x = var("deep_x");
    let mut n = x.clone();
    for i in 0..200_000 {
        n = n.add_const(i % 7);
    }
    assert_eq!(n.op(), Op::Add);
    drop(n);
}

#[test]
fn provenance_records_first_creator() {
    let line = line!() + 1;
    let n = var("prov").add_const(12345);
    assert_eq!(n.location().line(), line);
    assert!(n.location().file().ends_with("tests.rs"));
}

#[test]
fn tree_prints_shared_nodes_once() {
    let x = var("tx");
    let s = x.add(&x);
    let t = s.tree();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 3, "{t}");
    assert!(lines[0].contains("ADD : index"));
    assert!(lines[1].starts_with("├── ["));
    assert!(lines[2].ends_with("→ (same as above)"), "{t}");
    let r = UOp::new(Op::ReduceAxis, DType::F32, Srcs::new(), Arg::None);
    assert!(r.tree().contains("REDUCE_AXIS"));
}

#[test]
fn op_set_is_complete_and_names_round_trip() {
    assert_eq!(Op::COUNT, 91);
    assert_eq!(Op::ALL.first(), Some(&Op::Neg));
    assert_eq!(Op::ALL.last(), Some(&Op::Detach));
    for op in Op::ALL {
        assert_eq!(Op::from_name(op.name()), Some(*op));
    }
}
