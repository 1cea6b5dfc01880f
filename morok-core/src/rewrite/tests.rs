use super::*;
use crate::dtype::DType;
use crate::uop::{Arg, Op, UOp};
use std::sync::Arc;

fn var(name: &str) -> Arc<UOp> {
    UOp::define_var(name, DType::INDEX, 0, 9)
}

/// `x + 0 → x` and `x * 1 → x`, written as plain closures.
fn identities() -> PatternMatcher {
    let mut pm = PatternMatcher::new("identities");
    pm.rule(&[Op::Add], |n, _| {
        n.s(1).is_zero_const().then(|| n.s(0).clone())
    });
    pm.rule(&[Op::Mul], |n, _| {
        n.s(1).is_one_const().then(|| n.s(0).clone())
    });
    pm
}

#[test]
fn rewrites_nested_identities_to_fixpoint() {
    let x = var("x");
    let e = x
        .mul(&UOp::index(1))
        .add(&UOp::index(0))
        .mul(&UOp::index(1));
    let out = graph_rewrite(&identities(), &e, &mut ()).unwrap();
    assert!(Arc::ptr_eq(&out, &x));
    let out = graph_rewrite_bottom_up(&identities(), &e, &mut ()).unwrap();
    assert!(Arc::ptr_eq(&out, &x));
}

#[test]
fn cascades_after_children_change() {
    // (x*1 < x*1+0) has no match at the top until its operands are rewritten.
    let mut pm = identities();
    pm.rule(&[Op::CmpLt], |n, _| {
        Arc::ptr_eq(n.s(0), n.s(1)).then(|| UOp::bool_(false))
    });
    let x = var("y");
    let a = x.mul(&UOp::index(1));
    let e = a.bin(Op::CmpLt, &a.add(&UOp::index(0)));
    let out = graph_rewrite(&pm, &e, &mut ()).unwrap();
    assert_eq!(out.const_value(), Some(crate::ConstValue::Bool(false)));
}

#[test]
fn context_is_threaded_through_rules() {
    let mut pm: PatternMatcher<usize> = PatternMatcher::new("count");
    pm.rule(&[Op::Add], |n, hits: &mut usize| {
        *hits += 1;
        n.s(1).is_zero_const().then(|| n.s(0).clone())
    });
    let x = var("z");
    let e = x.add(&UOp::index(0)).add(&UOp::index(0));
    let mut hits = 0;
    let out = graph_rewrite(&pm, &e, &mut hits).unwrap();
    assert!(Arc::ptr_eq(&out, &x));
    assert!(hits >= 2);
}

#[test]
fn runaway_rules_stop_with_an_error() {
    let mut pm = PatternMatcher::new("grows-forever");
    pm.rule(&[Op::DefineVar], |n, _| Some(n.add_const(1)));
    let x = var("w");
    let opts = RewriteOptions {
        direction: Direction::TopDown,
        max_rewrites: Some(1000),
    };
    let err = graph_rewrite_with(&pm, &x, &mut (), opts).unwrap_err();
    assert_eq!(err.matcher, "grows-forever");
    assert_eq!(err.kind, RewriteErrorKind::Diverged { rewrites: 1000 });
    assert!(err.to_string().contains("did not converge"), "{err}");
    assert!(err.node.contains("DEFINE_VAR"), "{}", err.node);
}

#[test]
fn shared_subgraphs_are_rewritten_once() {
    let mut pm: PatternMatcher<usize> = PatternMatcher::new("visits");
    pm.rule(&[Op::Mul], |_, visits: &mut usize| {
        *visits += 1;
        None
    });
    let x = var("s");
    let m = x.mul(&x);
    let mut e = m.clone();
    for _ in 0..50 {
        e = e.add(&m);
    }
    let mut visits = 0;
    graph_rewrite_bottom_up(&pm, &e, &mut visits).unwrap();
    assert_eq!(visits, 1);
}

#[test]
fn rule_order_is_registration_order_across_wildcards() {
    let mut pm = PatternMatcher::new("order");
    pm.rule(&[], |n, _| (n.op() == Op::Add).then(|| UOp::index(1)));
    pm.rule(&[Op::Add], |_, _| Some(UOp::index(2)));
    let e = var("o").add_const(5);
    let out = graph_rewrite(&pm, &e, &mut ()).unwrap();
    assert_eq!(out.const_int().and_then(|v| i64::try_from(v).ok()), Some(1));
}

#[test]
fn split_gives_one_matcher_per_rule_with_its_ops() {
    let mut pm = identities();
    pm.rule(&[], |n, _| (n.op() == Op::Sub).then(|| UOp::index(7)));
    let parts = pm.split();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1].name(), "identities#1");
    let x = var("split");
    let add = x.add(&UOp::index(0));
    let mul = x.mul(&UOp::index(1));
    let sub = x.bin(Op::Sub, &x);
    assert!(parts[0].rewrite(&add, &mut ()).unwrap().is_some());
    assert!(parts[0].rewrite(&mul, &mut ()).unwrap().is_none());
    assert!(parts[1].rewrite(&mul, &mut ()).unwrap().is_some());
    assert!(parts[1].rewrite(&sub, &mut ()).unwrap().is_none());
    assert!(parts[2].rewrite(&sub, &mut ()).unwrap().is_some());
    assert!(parts.iter().all(|p| p.len() == 1));
}

#[test]
fn a_failing_rule_stops_the_rewrite_with_its_name_and_node() {
    let mut pm = PatternMatcher::new("fails-on-vars");
    pm.rule(&[Op::Add], |_, _| None);
    let line = line!() + 1;
    pm.try_rule(&[Op::DefineVar], |n, _| match n.arg() {
        Arg::Var { name, .. } if name == "bad" => Err(RuleError::new("no bad variables")),
        _ => Ok(None),
    });
    let good = var("good").add_const(1);
    assert_eq!(graph_rewrite(&pm, &good, &mut ()).unwrap(), good);
    let bad = var("bad").add_const(1);
    let err = graph_rewrite(&pm, &bad, &mut ()).unwrap_err();
    assert_eq!(err.matcher, "fails-on-vars");
    let RewriteErrorKind::RuleFailed {
        rule,
        location,
        message,
    } = &err.kind
    else {
        panic!("expected a rule failure, got {err}");
    };
    assert_eq!((*rule, message.as_str()), (1, "no bad variables"));
    assert!(
        location.contains(&format!("tests.rs:{line}:")),
        "{location}"
    );
    assert!(err.node.contains("DEFINE_VAR"), "{}", err.node);
    let text = err.to_string();
    assert!(
        text.contains("rule #1 of pattern set `fails-on-vars`")
            && text.contains("no bad variables"),
        "{text}"
    );
    // The failure also reaches a direct `rewrite` call.
    assert!(pm.rewrite(&var("bad"), &mut ()).is_err());
}
