//! The schedule cache: the same structure over new buffers skips the pipeline.
//! (Its own test binary: the pipeline counter is process-wide.)

use morok_core::interp::run_schedule;
use morok_core::{new_buffer_id, Arg, DType, Op, ReduceOp, UOp};
use morok_core::{pipeline_runs, schedule_cached, BufferKind};
use smallvec::smallvec;
use std::collections::HashMap;
use std::sync::Arc;

/// `sum(exp(x), axis 1) * y` over fresh [2, 3] and [2, 1] buffers.
fn graph() -> (Arc<UOp>, u64, u64) {
    let (ix, iy) = (new_buffer_id(), new_buffer_id());
    let buf = |id, size| {
        UOp::new(
            Op::Buffer,
            DType::F32,
            smallvec![],
            Arg::Buffer { id, size },
        )
    };
    let x = UOp::new(
        Op::Reshape,
        DType::F32,
        smallvec![buf(ix, 6)],
        Arg::Shape(smallvec![2, 3]),
    );
    let y = UOp::new(
        Op::Reshape,
        DType::F32,
        smallvec![buf(iy, 2)],
        Arg::Shape(smallvec![2, 1]),
    );
    let s = UOp::new(
        Op::ReduceAxis,
        DType::F32,
        smallvec![x.un(Op::Exp)],
        Arg::ReduceAxis(ReduceOp::Add, smallvec![1]),
    );
    (s.mul(&y), ix, iy)
}

#[test]
fn same_structure_over_new_buffers_runs_the_pipeline_once() {
    let before = pipeline_runs();
    let (g1, x1, y1) = graph();
    let (g2, x2, y2) = graph();
    assert!(!Arc::ptr_eq(&g1, &g2));
    let s1 = schedule_cached(&[g1]).unwrap();
    let s2 = schedule_cached(&[g2]).unwrap();
    assert_eq!(pipeline_runs() - before, 1);
    assert_eq!(s1.items.len(), s2.items.len());
    for (a, b) in s1.items.iter().zip(&s2.items) {
        assert!(Arc::ptr_eq(&a.ast, &b.ast), "kernel ASTs are shared");
    }
    // Inputs are the new call's buffers; outputs are fresh.
    let ids = |s: &morok_core::Schedule, k| -> Vec<u64> {
        s.buffers
            .iter()
            .filter(|b| b.kind == k)
            .map(|b| b.id)
            .collect()
    };
    let mut in2 = ids(&s2, BufferKind::Input);
    in2.sort();
    assert_eq!(in2, vec![x2, y2]);
    let (o1, o2) = (ids(&s1, BufferKind::Output), ids(&s2, BufferKind::Output));
    assert_ne!(o1, o2);
    // Both schedules compute their own inputs.
    let data =
        |x, y, k: f64| HashMap::from([(x, vec![0.0, 1.0, 2.0, 0.5, 0.25, k]), (y, vec![2.0, 3.0])]);
    let r1 = run_schedule(&s1, &data(x1, y1, 0.0)).unwrap();
    let r2 = run_schedule(&s2, &data(x2, y2, 1.0)).unwrap();
    let e = |v: f64| (v as f32).exp() as f64;
    let want = |k: f64| {
        [
            (e(0.0) + e(1.0) + e(2.0)) * 2.0,
            (e(0.5) + e(0.25) + e(k)) * 3.0,
        ]
    };
    for (r, o, k) in [(&r1, o1[0], 0.0), (&r2, o2[0], 1.0)] {
        for (g, w) in r[&o].iter().zip(want(k)) {
            assert!((g - w).abs() < 1e-4, "{g} vs {w}");
        }
    }
    // A different structure is a miss.
    let (g3, _, _) = graph();
    schedule_cached(&[g3.un(Op::Neg)]).unwrap();
    assert_eq!(pipeline_runs() - before, 2);
}
