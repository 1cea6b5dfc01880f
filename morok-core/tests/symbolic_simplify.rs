//! End-to-end behaviour of `symbolic::simplify` on index expressions of the
//! kind rangeify and lowering produce.

mod common;

use morok_core::{rule_count, simplify, symbolic};
use morok_core::{Arg, AxisType, ConstValue, DType, Op, UOp};
use std::sync::Arc;

use common::index_var as var;

fn idx(v: i64) -> Arc<UOp> {
    UOp::index(v)
}

fn same(a: &Arc<UOp>, b: &Arc<UOp>) -> bool {
    Arc::ptr_eq(a, b)
}

#[test]
fn split_and_recombined_index_folds_back() {
    // A 2-D loop nest over a flat index i = r*4 + c recovers (r, c).
    let r = UOp::range(&idx(8), 0, AxisType::Loop);
    let c = UOp::range(&idx(4), 1, AxisType::Loop);
    let i = r.mul_const(4).add(&c);
    assert!(same(&simplify(&i.bin(Op::Idiv, &idx(4))).unwrap(), &r));
    assert!(same(&simplify(&i.bin(Op::Mod, &idx(4))).unwrap(), &c));
    let back = i
        .bin(Op::Idiv, &idx(4))
        .mul_const(4)
        .add(&i.bin(Op::Mod, &idx(4)));
    assert!(same(&simplify(&back).unwrap(), &simplify(&i).unwrap()));
}

#[test]
fn div_mod_recombination() {
    let x = var("rx", -100, 100);
    let e = x
        .bin(Op::Idiv, &idx(7))
        .mul_const(7)
        .add(&x.bin(Op::Mod, &idx(7)));
    assert!(same(&simplify(&e).unwrap(), &x));
}

#[test]
fn constants_gather_and_fold() {
    let x = var("cx", 0, 10);
    let e = x
        .add_const(3)
        .add_const(4)
        .mul_const(2)
        .bin(Op::Sub, &x.mul_const(2));
    let out = simplify(&e).unwrap();
    assert_eq!(out.const_value(), Some(ConstValue::Int(14)));
}

#[test]
fn comparisons_decided_by_bounds() {
    let r = UOp::range(&idx(16), 0, AxisType::Loop);
    let e = r.bin(Op::CmpLt, &idx(16)).where_(&r, &idx(0));
    assert!(same(&simplify(&e).unwrap(), &r));
}

#[test]
fn narrow_types_are_not_simplified_across_wrap_around() {
    // (x + 100) < 50 over i8 with x in [0, 100]: x + 100 wraps, so the
    // comparison must not become x < -50.
    let x = UOp::new(
        Op::DefineVar,
        DType::I8,
        Vec::new(),
        Arg::Var {
            name: "nx".into(),
            min: 0,
            max: 100,
        },
    );
    let c = |v| UOp::const_(DType::I8, ConstValue::Int(v));
    let e = x.add(&c(100)).bin(Op::CmpLt, &c(50));
    let out = simplify(&e).unwrap();
    assert_ne!(out.const_value(), Some(ConstValue::Bool(false)));
    assert_eq!(out.op(), Op::CmpLt);
}

#[test]
fn the_rule_set_is_large_and_counted() {
    let n = rule_count();
    println!("symbolic rules: {n}");
    assert!(n >= 100, "{n}");
    assert_eq!(symbolic().len(), n);
}
