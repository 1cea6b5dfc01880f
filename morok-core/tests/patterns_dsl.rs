//! Behaviour of the `patterns!` DSL: every pattern form, both arrows,
//! guards, templates, context, and rule order.

mod common;

use morok_core::rewrite::graph_rewrite;
use morok_core::{patterns, Arg, AxisType, ConstValue, DType, Op, PatternMatcher, UOp};
use std::sync::Arc;

/// An `index` variable over `[0, 100]`.
fn var(name: &str) -> Arc<UOp> {
    common::index_var(name, 0, 100)
}

fn rewrite<C>(pm: &PatternMatcher<C>, node: &Arc<UOp>, ctx: &mut C) -> Option<Arc<UOp>> {
    pm.rewrite(node, ctx).expect("no rule fails")
}

fn same(a: &Option<Arc<UOp>>, b: &Arc<UOp>) -> bool {
    a.as_ref().is_some_and(|a| Arc::ptr_eq(a, b))
}

fn range(axis: usize) -> Arc<UOp> {
    UOp::range(&UOp::index(8), axis, AxisType::Loop)
}

#[test]
fn commutative_tries_both_orders() {
    let pm = patterns! { Add[x, @zero] ~> x };
    let x = var("comm_x");
    let zero = UOp::index(0);
    assert!(same(&rewrite(&pm, &x.add(&zero), &mut ()), &x));
    assert!(same(&rewrite(&pm, &zero.add(&x), &mut ()), &x));
    assert_eq!(rewrite(&pm, &x.add(&UOp::index(1)), &mut ()), None);
}

#[test]
fn ordered_matches_one_order_only() {
    let pm = patterns! { Sub(x, @zero) ~> x };
    let x = var("ord_x");
    let zero = UOp::index(0);
    assert!(same(&rewrite(&pm, &x.bin(Op::Sub, &zero), &mut ()), &x));
    assert_eq!(rewrite(&pm, &zero.bin(Op::Sub, &x), &mut ()), None);
}

#[test]
fn zero_and_one_match_any_dtype() {
    let pm = patterns! {
        Mul[x, @one] ~> x,
        Mul[_, z @ @zero] ~> z,
    };
    for dtype in [DType::F32, DType::INDEX, DType::BOOL] {
        let x = UOp::new(
            Op::DefineVar,
            dtype,
            Vec::new(),
            Arg::Var {
                name: format!("zo_{dtype}"),
                min: 0,
                max: 1,
            },
        );
        let one = UOp::one(dtype);
        let zero = UOp::zero(dtype);
        assert!(same(&rewrite(&pm, &x.mul(&one), &mut ()), &x), "{dtype}");
        assert!(
            same(&rewrite(&pm, &zero.mul(&x), &mut ()), &zero),
            "{dtype}"
        );
    }
}

#[test]
fn const_binds_the_value() {
    let pm = patterns! {
        Add(@const(a), @const(b)) => {
            let sum = a.as_i64()? + b.as_i64()?;
            Some(UOp::index(sum))
        },
        Neg(c @const) ~> c,
    };
    let out = rewrite(&pm, &UOp::index(3).add(&UOp::index(4)), &mut ());
    assert_eq!(out.and_then(|n| n.const_value()), Some(ConstValue::Int(7)));
    let two = UOp::const_f64(DType::F32, 2.0);
    assert_eq!(rewrite(&pm, &two.add(&two), &mut ()), None, "`?` declines");
    assert!(same(&rewrite(&pm, &two.un(Op::Neg), &mut ()), &two));
    assert_eq!(rewrite(&pm, &var("cb").un(Op::Neg), &mut ()), None);
}

#[test]
fn bool_literals() {
    let pm = patterns! {
        Where(@true, t, _) ~> t,
        Where(@false, _, f) ~> f,
    };
    let (t, f) = (var("bl_t"), var("bl_f"));
    let yes = UOp::bool_(true).where_(&t, &f);
    let no = UOp::bool_(false).where_(&t, &f);
    assert!(same(&rewrite(&pm, &yes, &mut ()), &t));
    assert!(same(&rewrite(&pm, &no, &mut ()), &f));
    let unknown = var("bl_c").bin(Op::CmpLt, &t).where_(&t, &f);
    assert_eq!(rewrite(&pm, &unknown, &mut ()), None);
}

#[test]
fn repeated_variable_means_the_same_node() {
    let pm = patterns! { Idiv(x, x) ~> UOp::one(x.dtype()) };
    let (x, y) = (var("rep_x"), var("rep_y"));
    let out = rewrite(&pm, &x.bin(Op::Idiv, &x), &mut ());
    assert_eq!(out.and_then(|n| n.const_value()), Some(ConstValue::Int(1)));
    assert_eq!(rewrite(&pm, &x.bin(Op::Idiv, &y), &mut ()), None);
}

#[test]
fn distinct_variables_match_distinct_or_equal_nodes() {
    let pm = patterns! { Sub(x, y) ~> y.bin(Op::Sub, x) };
    let (a, b) = (var("dv_a"), var("dv_b"));
    let swapped = rewrite(&pm, &a.bin(Op::Sub, &b), &mut ());
    assert!(same(&swapped, &b.bin(Op::Sub, &a)));
    // `x` and `y` may also be the same node; the rewrite then returns the
    // node itself, which the matcher reports as no change.
    assert_eq!(rewrite(&pm, &a.bin(Op::Sub, &a), &mut ()), None);
}

#[test]
fn infallible_rhs_takes_owned_or_borrowed_nodes() {
    let pm = patterns! {
        Neg(Neg(x)) ~> x,
        Sqrt(x) ~> x.clone(),
    };
    let x = var("rhs_x");
    let neg = x.un(Op::Neg);
    assert!(same(&rewrite(&pm, &neg.un(Op::Neg), &mut ()), &x));
    assert!(same(&rewrite(&pm, &x.un(Op::Sqrt), &mut ()), &x));
}

#[test]
fn fallible_rhs_may_decline_and_may_borrow() {
    let pm = patterns! {
        Max(x, y) => (x.id() < y.id()).then_some(x),
        Max(_, y) ~> y,
    };
    let (a, b) = (var("fb_a"), var("fb_b"));
    let (lo, hi) = if a.id() < b.id() { (a, b) } else { (b, a) };
    assert!(same(&rewrite(&pm, &lo.bin(Op::Max, &hi), &mut ()), &lo));
    // The first rule declines, so the second one applies.
    assert!(same(&rewrite(&pm, &hi.bin(Op::Max, &lo), &mut ()), &lo));
}

#[test]
fn guards_filter_matches() {
    let pm = patterns! {
        Mul[x, @const(c)] if c.as_i64() == Some(2) ~> x.add(x),
    };
    let x = var("g_x");
    assert!(same(&rewrite(&pm, &x.mul_const(2), &mut ()), &x.add(&x)));
    assert_eq!(rewrite(&pm, &x.mul_const(3), &mut ()), None);
}

#[test]
fn nested_patterns_and_root_binding() {
    let pm = patterns! {
        n @ Add(Mul(x, c @const(cv)), y) if cv.is_one() ~> {
            assert_eq!(n.op(), Op::Add);
            assert!(c.is_one_const());
            x.add(y)
        },
    };
    let (x, y) = (var("nest_x"), var("nest_y"));
    let e = x.mul_const(1).add(&y);
    assert!(same(&rewrite(&pm, &e, &mut ()), &x.add(&y)));
    assert_eq!(rewrite(&pm, &x.mul_const(2).add(&y), &mut ()), None);
    assert_eq!(
        rewrite(&pm, &y.add(&x.mul_const(1)), &mut ()),
        None,
        "ordered"
    );
    assert_eq!(rewrite(&pm, &x.add(&x.mul_const(1)), &mut ()), None);
}

#[test]
fn commutative_backtracks_through_nested_patterns() {
    // The first order binds `x` to NEG(y) and fails deeper down; only the
    // second order matches.
    let pm = patterns! { Add[x, Neg(x)] ~> UOp::zero(x.dtype()) };
    let y = var("bt_y");
    let e = y.un(Op::Neg).add(&y);
    let out = rewrite(&pm, &e, &mut ());
    assert_eq!(out.and_then(|n| n.const_value()), Some(ConstValue::Int(0)));
    assert_eq!(
        rewrite(&pm, &var("bt_z").un(Op::Neg).add(&y), &mut ()),
        None
    );
}

#[test]
fn nested_commutative_nodes_try_every_combination() {
    let pm = patterns! { Mul[Add[x, @zero], @one] ~> x };
    let x = var("nc_x");
    let (zero, one) = (UOp::index(0), UOp::index(1));
    for inner in [x.add(&zero), zero.add(&x)] {
        assert!(same(&rewrite(&pm, &inner.mul(&one), &mut ()), &x));
        assert!(same(&rewrite(&pm, &one.mul(&inner), &mut ()), &x));
    }
}

#[test]
fn declining_rhs_retries_the_other_order() {
    let pm = patterns! {
        Add[a @const(av), b] => av.is_one().then(|| b.clone()),
    };
    let (one, two) = (UOp::index(1), UOp::index(2));
    assert!(same(&rewrite(&pm, &one.add(&two), &mut ()), &two));
    assert!(same(&rewrite(&pm, &two.add(&one), &mut ()), &two));
}

#[test]
fn closure_form_selects_bindings() {
    let pm = patterns! {
        Add[x, @zero] ~> |x| x.clone(),
        Where(c, t, f) => |t, f, c| (!Arc::ptr_eq(t, f) && c.op() == Op::Const).then(|| t.clone()),
    };
    let x = var("cl_x");
    assert!(same(&rewrite(&pm, &UOp::index(0).add(&x), &mut ()), &x));
    let (t, f) = (var("cl_t"), var("cl_f"));
    let w = UOp::bool_(true).where_(&t, &f);
    assert!(same(&rewrite(&pm, &w, &mut ()), &t));
}

#[test]
fn templates_make_one_rule_per_op() {
    let pm = patterns! {
        for op in binary [Add, Mul, Max] {
            op(a @const(av), @const(bv)) => {
                let (x, y) = (av.as_i64()?, bv.as_i64()?);
                let v = match op {
                    Op::Add => x + y,
                    Op::Mul => x * y,
                    _ => x.max(y),
                };
                Some(UOp::const_(a.dtype(), ConstValue::Int(v)))
            },
        },
    };
    assert_eq!(pm.len(), 3);
    let (three, four) = (UOp::index(3), UOp::index(4));
    for (op, want) in [(Op::Add, 7), (Op::Mul, 12), (Op::Max, 4)] {
        let out = rewrite(&pm, &three.bin(op, &four), &mut ());
        assert_eq!(
            out.and_then(|n| n.const_value()),
            Some(ConstValue::Int(want))
        );
    }
    assert_eq!(rewrite(&pm, &three.bin(Op::Sub, &four), &mut ()), None);
}

#[test]
fn template_ops_work_in_nested_positions_and_nest() {
    let pm = patterns! {
        for outer in unary [Neg, Sqrt] {
            for inner in any [Exp, Log] {
                outer(inner(x)) ~> x.un(outer).un(inner),
            }
        }
    };
    assert_eq!(pm.len(), 4);
    let x = var("tn_x");
    for outer in [Op::Neg, Op::Sqrt] {
        for inner in [Op::Exp, Op::Log] {
            let out = rewrite(&pm, &x.un(inner).un(outer), &mut ());
            assert!(same(&out, &x.un(outer).un(inner)), "{outer:?}({inner:?})");
        }
    }
    assert_eq!(rewrite(&pm, &x.un(Op::Sin).un(Op::Neg), &mut ()), None);
    assert_eq!(rewrite(&pm, &x.un(Op::Exp).un(Op::Exp), &mut ()), None);
}

#[test]
fn context_is_available_as_ctx() {
    struct Counter {
        hits: usize,
    }
    let pm = patterns! {
        @context Counter;
        Add[x, @zero] ~> {
            ctx.hits += 1;
            x
        },
        Mul[x, @one] if { ctx.hits += 100; true } ~> x,
        Sub(x, y) ~> |x, ctx| {
            ctx.hits += 10_000;
            x.bin(Op::Sub, x)
        },
    };
    let x = var("ctx_x");
    let e = x.add(&UOp::index(0)).mul(&UOp::index(1));
    let mut counter = Counter { hits: 0 };
    let out = graph_rewrite(&pm, &e, &mut counter).unwrap();
    assert!(Arc::ptr_eq(&out, &x));
    assert_eq!(counter.hits, 101);
    let mut counter = Counter { hits: 0 };
    rewrite(&pm, &x.bin(Op::Sub, &var("ctx_y")), &mut counter);
    assert_eq!(counter.hits, 10_000);
}

#[test]
fn rest_matches_any_number_of_further_operands() {
    let pm = patterns! {
        End(x, ..) ~> x,
        Sink() ~> UOp::index(0),
    };
    let x = var("rest_x").store(&UOp::index(1));
    let ranges: Vec<_> = (0..3).map(range).collect();
    for n in 1..=3 {
        assert!(
            same(&rewrite(&pm, &x.end(&ranges[..n]), &mut ()), &x),
            "{n}"
        );
    }
    assert!(rewrite(&pm, &UOp::sink(Vec::new()), &mut ()).is_some());
    assert_eq!(rewrite(&pm, &UOp::sink(vec![x.clone()]), &mut ()), None);
}

#[test]
fn operand_count_must_match_without_rest() {
    let pm = patterns! { End(x, r) ~> x.end(&[r.clone(), r.clone()]) };
    let x = var("cnt_x").store(&UOp::index(1));
    let (r0, r1) = (range(10), range(11));
    let out = rewrite(&pm, &x.end(std::slice::from_ref(&r0)), &mut ());
    assert!(same(&out, &x.end(&[r0.clone(), r0.clone()])));
    assert_eq!(rewrite(&pm, &x.end(&[r0, r1]), &mut ()), None);
}

#[test]
fn wildcard_rules_see_every_node() {
    let pm = patterns! {
        @context Vec<Op>;
        n @ _ => {
            ctx.push(n.op());
            None::<Arc<UOp>>
        },
    };
    let x = var("wc_x");
    let mut seen = Vec::new();
    graph_rewrite(&pm, &x.add(&UOp::index(2)).un(Op::Neg), &mut seen).unwrap();
    seen.sort();
    seen.dedup();
    assert_eq!(seen, vec![Op::Neg, Op::Add, Op::Const, Op::DefineVar]);
}

#[test]
fn rules_run_in_order_and_first_match_wins() {
    let pm = patterns! {
        Add(x, _) ~> x,
        Add(_, y) ~> y,
        n @ _ ~> UOp::index(n.id() as i64),
    };
    let (x, y) = (var("ord1_x"), var("ord1_y"));
    assert!(same(&rewrite(&pm, &x.add(&y), &mut ()), &x));
    assert!(rewrite(&pm, &x.un(Op::Neg), &mut ()).is_some());
}

#[test]
fn matcher_names() {
    let named: PatternMatcher = patterns! { @name "identities"; Add[x, @zero] ~> x };
    assert_eq!(named.name(), "identities");
    let empty: PatternMatcher = patterns! {};
    assert!(empty.is_empty());
    assert!(empty.name().starts_with("patterns!@"), "{}", empty.name());
    assert!(empty.name().contains("patterns_dsl.rs"), "{}", empty.name());
}

#[test]
fn a_small_rule_set_simplifies_a_graph() {
    let pm = patterns! {
        @name "mini-symbolic";
        Add[x, @zero] ~> x,
        Mul[x, @one] ~> x,
        Mul[_, z @ @zero] ~> z,
        Idiv(x, x) ~> UOp::one(x.dtype()),
        for op in binary [Add, Mul] {
            op(a @const(av), @const(bv)) => {
                let (x, y) = (av.as_i64()?, bv.as_i64()?);
                let v = if op == Op::Add { x + y } else { x * y };
                Some(UOp::const_(a.dtype(), ConstValue::Int(v)))
            },
        },
    };
    let x = var("mini_x");
    // ((x / x) * (2 + 3) + x * 0) * 1  →  5
    let e = x
        .bin(Op::Idiv, &x)
        .mul(&UOp::index(2).add(&UOp::index(3)))
        .add(&x.mul_const(0))
        .mul_const(1);
    let out = graph_rewrite(&pm, &e, &mut ()).unwrap();
    assert_eq!(out.const_value(), Some(ConstValue::Int(5)));
}

#[test]
fn constant_patterns_at_the_root_dispatch_on_const() {
    let pm = patterns! {
        @zero ~> UOp::index(100),
        c @const(v) if v == ConstValue::Int(7) ~> UOp::index(v.as_i64().unwrap_or(0) * 2 + c.dtype().count() as i64),
        @true ~> UOp::bool_(false),
    };
    let out = |n: &Arc<UOp>| rewrite(&pm, n, &mut ()).and_then(|n| n.const_value());
    assert_eq!(out(&UOp::index(0)), Some(ConstValue::Int(100)));
    assert_eq!(out(&UOp::index(7)), Some(ConstValue::Int(15)));
    assert_eq!(out(&UOp::bool_(true)), Some(ConstValue::Bool(false)));
    assert_eq!(out(&UOp::index(3)), None);
    assert_eq!(rewrite(&pm, &var("root_c"), &mut ()), None);
}

#[test]
fn a_variable_root_matches_every_op() {
    let pm = patterns! {
        @context usize;
        x if x.src().is_empty() => {
            *ctx += 1;
            None::<Arc<UOp>>
        },
    };
    let mut leaves = 0;
    let e = var("vr_x").add(&UOp::index(1)).un(Op::Neg);
    graph_rewrite(&pm, &e, &mut leaves).unwrap();
    assert!(leaves >= 2, "{leaves}");
}

#[test]
fn bindings_used_only_in_format_strings_are_passed() {
    // `x` appears only inside the format string: it must still be bound.
    let pm = patterns! { Neg(x) ~> UOp::index(format!("{x:?}").len() as i64) };
    let x = var("fmt_x");
    let out = rewrite(&pm, &x.un(Op::Neg), &mut ());
    let want = format!("{x:?}").len() as i64;
    assert_eq!(
        out.and_then(|n| n.const_value()),
        Some(ConstValue::Int(want))
    );
}

/// `=> try`: the rhs is a `Result<Option<_>, E>`; `Ok(None)` declines, an
/// error stops the rewrite with the matcher's name, the rule's index and
/// line, and the node.
#[test]
fn try_rules_decline_rewrite_or_fail() {
    use morok_core::rewrite::{RewriteErrorKind, RuleError};
    fn half(c: ConstValue) -> Result<Option<Arc<UOp>>, String> {
        match c.as_i64() {
            Some(v) if v % 2 == 1 => Err(format!("{v} is odd")),
            Some(0) => Ok(None),
            Some(v) => Ok(Some(UOp::index(v / 2))),
            None => Err("not an integer".into()),
        }
    }
    let line = line!() + 4;
    let pm = patterns! {
        @name "halve";
        Neg(x) => Some(x),
        Sqrt(@const(c)) => try half(c),
        Exp2(x) => try |x| Ok::<_, RuleError>(Some(x)),
    };
    let k = |v: i64| UOp::index(v).un(Op::Sqrt);
    assert_eq!(rewrite(&pm, &k(8), &mut ()), Some(UOp::index(4)));
    assert_eq!(rewrite(&pm, &k(0), &mut ()), None);
    let x = var("try_x");
    assert!(same(&rewrite(&pm, &x.un(Op::Exp2), &mut ()), &x));
    // Inside a graph: the error names the rule and the node.
    let err = graph_rewrite(&pm, &k(3).add(&x), &mut ()).unwrap_err();
    assert_eq!(err.matcher, "halve");
    match &err.kind {
        RewriteErrorKind::RuleFailed {
            rule,
            location,
            message,
        } => {
            assert_eq!((*rule, message.as_str()), (1, "3 is odd"));
            assert!(
                location.contains(&format!("patterns_dsl.rs:{line}:")),
                "{location} (rule on line {line})"
            );
        }
        other => panic!("expected a rule failure, got {other:?}"),
    }
    assert!(err.node.contains("SQRT"), "{}", err.node);
}
