//! The index-algebra folds the optimizer relies on (tinygrad's symbolic
//! test cases): each input simplifies to the stated form, up to the order
//! of commutative operands (both sides are simplified and must be the same
//! interned node, and the result is no larger than the stated form), with
//! the stated or tighter bounds.

mod common;

use morok_core::canonical;
use morok_core::int_bounds;
use morok_core::simplify;
use morok_core::{Arg, ConstValue, DType, Op, UOp};
use std::sync::Arc;

type U = Arc<UOp>;

use common::index_var as var;

fn c(v: i64) -> U {
    UOp::index(v)
}

fn div(a: &U, b: i64) -> U {
    a.bin(Op::Idiv, &c(b))
}

fn rem(a: &U, b: i64) -> U {
    a.bin(Op::Mod, &c(b))
}

fn lt(a: &U, b: &U) -> U {
    a.bin(Op::CmpLt, b)
}

/// `input` simplifies to the node `expected` simplifies to (up to the
/// order of commutative operands), and that node is no larger than
/// `expected` (so it is the stated form).
#[track_caller]
fn folds_to(input: &U, expected: &U) -> U {
    let got = simplify(input).expect("simplify");
    let want = simplify(expected).expect("simplify");
    assert!(
        canonical(&got) == canonical(&want),
        "\ninput:    {}\ngot:      {}\nexpected: {}",
        input.tree(),
        got.tree(),
        want.tree()
    );
    assert!(
        want.node_count() <= expected.node_count(),
        "the stated form itself was rewritten:\n{}",
        want.tree()
    );
    got
}

#[track_caller]
fn bounds(n: &U) -> (i128, i128) {
    int_bounds(n).expect("integer bounds")
}

#[test]
fn affine_quotient_linearizes_div_and_mod() {
    let a = var("a", 0, 3);
    let x = a.mul_const(3).add_const(3);
    folds_to(&rem(&x, 4), &c(3).sub(&a));
    folds_to(&div(&x, 4), &a);
}

#[test]
fn gcd_with_a_droppable_remainder() {
    let g = var("g", 0, 7);
    let l = var("l", 0, 1);
    let x = g.mul_const(4).add(&l.mul_const(2)).add_const(1);
    folds_to(&div(&x, 10), &div(&g.mul_const(2).add(&l), 5));
}

#[test]
fn recombination_inside_longer_sums() {
    let g = var("g", 0, 63);
    let l = var("l", 0, 3);
    let e = l.add(&rem(&g, 4)).add(&div(&g, 4).mul_const(4));
    folds_to(&e, &g.add(&l));
    let x = var("x", 0, 1000);
    let e = rem(&x, 4)
        .mul_const(3)
        .add(&rem(&div(&x, 4), 2).mul_const(12));
    folds_to(&e, &rem(&x, 8).mul_const(3));
}

#[test]
fn nest_by_factor() {
    let a = var("a", 0, 7);
    let b = var("b", 0, 1);
    let e = rem(&a.mul_const(4).add(&b).add_const(2), 8);
    let got = folds_to(&e, &b.add(&rem(&a, 2).mul_const(4)).add_const(2));
    let (lo, hi) = bounds(&got);
    assert!(lo >= 2 && hi <= 7, "bounds [{lo}, {hi}]");
}

#[test]
fn symbolic_divisors() {
    let d = var("d", 1, 16);
    let a = var("a", 0, 10);
    let b = var("b", 0, 30);
    let e = d.mul(&a).add(&b).bin(Op::Idiv, &d);
    folds_to(&e, &a.add(&b.bin(Op::Idiv, &d)));
    let n = var("n", 1, 100);
    let r = UOp::range(&n, 0, morok_core::AxisType::Loop);
    folds_to(&r.bin(Op::Idiv, &n), &c(0));
}

#[test]
fn comparisons_drop_bounded_remainders_and_divide_by_the_gcd() {
    let i = var("i", 0, 1000);
    let f = var("f", 0, 3);
    folds_to(&lt(&i.mul_const(4).add(&f), &c(512)), &lt(&i, &c(128)));
    let a = var("a", 0, 10);
    let b = var("b", 0, 10);
    folds_to(
        &lt(&a.mul_const(6).add(&b.mul_const(6)), &c(8)),
        &lt(&a.mul_const(3).add(&b.mul_const(3)), &c(4)),
    );
}

#[test]
fn ge_of_a_multiple_is_order_independent() {
    let a = var("a", 0, 10);
    let ge = lt(&a.mul_const(4), &c(12)).un(Op::Not);
    let got = simplify(&ge).unwrap();
    let want = simplify(&lt(&a, &c(3)).un(Op::Not)).unwrap();
    assert_eq!(canonical(&got), canonical(&want), "{}", got.tree());
}

#[test]
fn tautologies_and_bool_casts() {
    let a = var("a", 0, 10);
    let p = lt(&a, &c(2));
    folds_to(&p.bin(Op::Or, &p.un(Op::Not)), &UOp::bool_(true));
    let e = p
        .cast(DType::I32)
        .bin(Op::CmpNe, &UOp::const_(DType::I32, ConstValue::Int(0)));
    folds_to(&e, &p);
}

#[test]
fn like_terms_merge_and_xor_cancels() {
    let a = var("a", 0, 10);
    let b = var("b", 0, 10);
    let e = b.add(&a.mul_const(2)).add(&a.mul_const(3));
    folds_to(&e, &b.add(&a.mul_const(5)));
    let x = UOp::new(
        Op::DefineVar,
        DType::I32,
        Vec::new(),
        Arg::Var {
            name: "xa".into(),
            min: 0,
            max: 100,
        },
    );
    let five = UOp::const_(DType::I32, ConstValue::Int(5));
    folds_to(&x.bin(Op::Xor, &five).bin(Op::Xor, &five), &x);
    folds_to(&var("p", 7, 7).add(&a), &a.add_const(7));
}

#[test]
fn selects_merge_over_a_shared_condition() {
    let x = var("x", 0, 10);
    let a = var("a", 0, 10);
    let b = var("b", 0, 10);
    let cnd = lt(&x, &c(2));
    let e = cnd.where_(&a, &c(0)).add(&cnd.where_(&b, &c(1)));
    folds_to(&e, &cnd.where_(&a.add(&b), &c(1)));
    let p = var("p", 0, 10);
    let q = var("q", 0, 10);
    let inner = cnd.where_(&p, &q);
    let e = cnd.where_(&inner.mul_const(2), &inner.add_const(1));
    folds_to(&e, &cnd.where_(&p.mul_const(2), &q.add_const(1)));
}
