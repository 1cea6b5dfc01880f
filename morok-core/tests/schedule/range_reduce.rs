//! The range and reduce rewrites of `schedule/rangeify/`: each test builds
//! a small graph the rewrite applies to, checks that it fired (the kernel
//! AST changed the way the rewrite promises) and that the values equal the
//! reference evaluator's on random data.

use crate::common::*;
use morok_core::{DType, Op, ReduceOp};

/// Random integers in `[-lim, lim]`.
fn ints(n: usize, seed: u64, lim: f64) -> Vec<f64> {
    data(n, seed)
        .iter()
        .map(|v| (v * lim / 2.0).round())
        .collect()
}

#[test]
fn integer_product_over_an_unused_range_is_a_power() {
    let mut io = Inputs::default();
    for (dt, lim) in [(DType::I32, 1000.0), (DType::U8, 0.0), (DType::I64, 1e6)] {
        let vals = if lim == 0.0 {
            (0..6).map(|i| (i * 37 % 256) as f64).collect()
        } else {
            ints(6, 3, lim)
        };
        let x = io.typed(dt, &[6, 1], vals);
        // x^13 wraps for most elements: the power must wrap the same way.
        let p = reduce(&expand(&x, &[6, 13]), ReduceOp::Mul, &[1]);
        let s = io.run_checked(&[p]);
        assert_eq!(count_ops(&s, Op::Reduce), 0, "{}", s.items[0].ast.tree());
    }
}

#[test]
fn integer_product_over_used_and_unused_ranges() {
    let mut io = Inputs::default();
    let x = io.typed(DType::I32, &[4, 3, 1], ints(12, 4, 50.0));
    let p = reduce(&expand(&x, &[4, 3, 5]), ReduceOp::Mul, &[1, 2]);
    let s = io.run_checked(&[p]);
    // The product over the used axis stays a loop; the unused one is gone.
    for item in &s.items {
        for n in item.ast.toposort() {
            if n.op() == Op::Reduce {
                assert_eq!(n.src().len(), 2, "one range left:\n{}", item.ast.tree());
            }
        }
    }
}

#[test]
fn short_float_product_is_a_chain_long_one_stays_a_loop() {
    let mut io = Inputs::default();
    let x = io.f32(&[5, 1], data(5, 5));
    let short = reduce(&expand(&x, &[5, 4]), ReduceOp::Mul, &[1]);
    let s = io.run_checked(&[short]);
    assert_eq!(count_ops(&s, Op::Reduce), 0);
    let long = reduce(&expand(&x, &[5, 9]), ReduceOp::Mul, &[1]);
    let s = io.run_checked(&[long]);
    assert_eq!(
        count_ops(&s, Op::Reduce),
        1,
        "regrouping 9 factors rounds differently"
    );
}

#[test]
fn max_min_and_bool_product_over_an_unused_range_are_the_value() {
    let mut io = Inputs::default();
    let x = io.f32(&[6, 1], data(6, 6));
    let e = expand(&x, &[6, 7]);
    let b = bin(Op::CmpLt, &e, &full(0.0, DType::F32, &[6, 7]));
    let roots = [
        max(&e, &[1]),
        reduce(&e, ReduceOp::Min, &[1]),
        reduce(&b, ReduceOp::Mul, &[1]),
    ];
    let s = io.run_checked(&roots);
    assert_eq!(count_ops(&s, Op::Reduce), 0);
}

/// `Σ_j y[i] · cast(j < i)` with an integer `arange`: the MUL of a cast
/// bool is read as a `where`, the comparison of the two integer counters as
/// one of `index` expressions, and the bound patterns count: `i · y[i]`.
#[test]
fn mul_of_a_cast_bool_collapses() {
    let mut io = Inputs::default();
    let n = 9;
    let y = io.f32(&[n, 1], data(n, 7));
    let r = arange(n, DType::I32);
    let rows = expand(&reshape(&r, &[n, 1]), &[n, n]);
    let cols = expand(&reshape(&r, &[1, n]), &[n, n]);
    let mask = bin(Op::CmpLt, &cols, &rows).cast(DType::F32);
    let out = sum(&mul(&expand(&y, &[n, n]), &mask), &[1]);
    let s = io.run_checked(&[out]);
    assert_eq!(count_ops(&s, Op::Reduce), 0, "{}", s.items[0].ast.tree());
}
