//! Verification of every symbolic rule (test-only).
//!
//! A corpus of expressions is built over variables of every scalar type:
//! bounded integer variables (`DEFINE_VAR`), unbounded values (`LOAD`s,
//! whose domain adds the type's edge values so narrow types overflow),
//! bools, and floats over their edge values (±0, ±1, ±inf, NaN,
//! subnormals, the largest finite value, ...). Each rule is split out of
//! its category and tried on every node of the corpus; wherever it fires,
//! the node before and its replacement are evaluated with the reference
//! interpreter on *every* assignment of the variables they use, and must
//! agree whenever the original is defined (a rewrite may remove undefined
//! behaviour, never change a defined value). Every rule must fire at least
//! once. The whole rule set is then run on the corpus and checked the same
//! way, and the bounds of every corpus node are checked against its values.

use super::bounds::bounds;
use super::interp::{Lanes, Program};
use super::{categories, simplify};
use crate::dtype::{DType, ScalarType};
use crate::uop::{Arg, AxisType, ConstValue, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The variables of the corpus and the values each takes.
/// Writes a summary line straight to stderr, past the test harness's
/// output capture, so `cargo test` shows it for passing tests too.
pub(super) fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

pub(super) struct Vars {
    domains: HashMap<u64, Vec<ConstValue>>,
    keep: Vec<Arc<UOp>>,
}

impl Vars {
    fn add(&mut self, node: Arc<UOp>, domain: Vec<ConstValue>) -> Arc<UOp> {
        self.domains.insert(node.id(), domain);
        self.keep.push(node.clone());
        node
    }

    /// A bounded integer variable over `[min, max]`.
    fn var(&mut self, name: &str, dtype: DType, min: i64, max: i64) -> Arc<UOp> {
        let node = UOp::define_var(name, dtype, min, max);
        let t = dtype.scalar_type();
        let dom = (min..=max)
            .map(|v| ConstValue::from_i128(v as i128, t))
            .collect();
        self.add(node, dom)
    }

    /// An unbounded value of `dtype` (a load from buffer `slot`) taking the
    /// given values.
    fn load(&mut self, slot: i64, dtype: DType, domain: Vec<ConstValue>) -> Arc<UOp> {
        let node = UOp::define_global(slot, dtype)
            .index_into(&UOp::index(0), None)
            .load();
        self.add(node, domain)
    }

    /// The variables `root` depends on.
    fn leaves_of(&self, nodes: &[Arc<UOp>]) -> Vec<(u64, &[ConstValue])> {
        nodes
            .iter()
            .filter_map(|n| self.domains.get(&n.id()).map(|d| (n.id(), d.as_slice())))
            .collect()
    }
}

/// Integer values for unbounded variables: small values plus the edges.
fn int_domain(t: ScalarType) -> Vec<ConstValue> {
    let (min, max) = (t.min_int(), t.max_int());
    let mut vals: Vec<i128> = (-8..=16).collect();
    vals.extend([min, min + 1, max - 1, max, max / 2, max / 2 + 1]);
    vals.retain(|v| *v >= min && *v <= max);
    vals.sort();
    vals.dedup();
    vals.into_iter()
        .map(|v| ConstValue::from_i128(v, t))
        .collect()
}

/// Float edge values, rounded to the type (duplicates removed).
fn float_domain(t: ScalarType) -> Vec<ConstValue> {
    let tiny = match t {
        ScalarType::F16 => 2f64.powi(-24),
        ScalarType::BF16 => 2f64.powi(-133),
        ScalarType::F32 => f32::from_bits(1) as f64,
        _ => f64::from_bits(1),
    };
    let big = match t {
        ScalarType::F16 => 65504.0,
        ScalarType::BF16 => half::bf16::MAX.to_f64(),
        ScalarType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    };
    let mut out: Vec<ConstValue> = Vec::new();
    for v in [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        -2.5,
        3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        tiny,
        -tiny,
        big,
        -big,
    ] {
        let c = ConstValue::from_f64(v, t);
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Outcome counters of a verification run.
#[derive(Default)]
pub(super) struct Stats {
    /// Rule applications checked.
    pub firings: usize,
    /// Variable assignments evaluated (before and after).
    pub cases: usize,
}

/// Two lane vectors agree: equal values, all NaNs equal.
fn same_value(a: &Lanes, b: &Lanes) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (ConstValue::Float(p), ConstValue::Float(q)) => {
                (p.is_nan() && q.is_nan()) || p.to_bits() == q.to_bits()
            }
            _ => x == y,
        })
}

/// Checks that `after` computes the value of `before` wherever `before` is
/// defined, for every assignment of the variables; returns the number of
/// assignments, or a description of the first counterexample.
pub(super) fn check_equivalent(
    vars: &Vars,
    before: &Arc<UOp>,
    after: &Arc<UOp>,
) -> Result<usize, String> {
    if before.dtype() != after.dtype() {
        return Err(format!(
            "dtype changed from {} to {}\nbefore:\n{}after:\n{}",
            before.dtype(),
            after.dtype(),
            before.tree(),
            after.tree()
        ));
    }
    let (pb, pa) = (Program::new(before), Program::new(after));
    let leaves = vars.leaves_of(pb.nodes());
    let extra = vars.leaves_of(pa.nodes());
    if extra
        .iter()
        .any(|(id, _)| !leaves.iter().any(|(l, _)| l == id))
    {
        return Err(format!(
            "the rewrite introduced a variable\nafter:\n{}",
            after.tree()
        ));
    }
    let mut env: HashMap<u64, ConstValue> = HashMap::new();
    let mut idx = vec![0usize; leaves.len()];
    let mut cases = 0;
    loop {
        for (k, (id, dom)) in leaves.iter().enumerate() {
            env.insert(*id, dom[idx[k]]);
        }
        cases += 1;
        if let Some(vb) = pb.run(&env) {
            let va = pa.run(&env);
            if !va.as_ref().is_some_and(|va| same_value(&vb, va)) {
                let assignment: Vec<String> = leaves
                    .iter()
                    .map(|(id, _)| format!("[{id}]={}", env[id]))
                    .collect();
                return Err(format!(
                    "value changed at {}: {:?} became {:?}\nbefore:\n{}after:\n{}",
                    assignment.join(", "),
                    vb,
                    va,
                    before.tree(),
                    after.tree()
                ));
            }
        }
        // Next assignment (odometer order).
        let mut k = 0;
        loop {
            if k == leaves.len() {
                return Ok(cases);
            }
            idx[k] += 1;
            if idx[k] < leaves[k].1.len() {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
    }
}

/// Checks every node's values against its bounds on every assignment.
fn check_bounds(vars: &Vars, root: &Arc<UOp>) -> Result<(), String> {
    let p = Program::new(root);
    for n in p.nodes() {
        let t = n.dtype();
        if t.is_ptr() || !(t.is_int() || t.is_bool()) {
            continue;
        }
        let (lo, hi) = bounds(n);
        let (lo, hi) = (lo.as_i128().unwrap(), hi.as_i128().unwrap());
        let pn = Program::new(n);
        let leaves = vars.leaves_of(pn.nodes());
        if leaves.len() > 2 {
            continue;
        }
        let mut env = HashMap::new();
        let first: Vec<ConstValue> = leaves.first().map_or(vec![], |l| l.1.to_vec());
        let second: Vec<ConstValue> = leaves.get(1).map_or(vec![], |l| l.1.to_vec());
        for a in first
            .iter()
            .map(Some)
            .chain(first.is_empty().then_some(None))
        {
            for b in second
                .iter()
                .map(Some)
                .chain(second.is_empty().then_some(None))
            {
                if let Some(a) = a {
                    env.insert(leaves[0].0, *a);
                }
                if let Some(b) = b {
                    env.insert(leaves[1].0, *b);
                }
                for v in pn.run(&env).into_iter().flatten() {
                    let v = v.as_i128().unwrap();
                    if v < lo || v > hi {
                        return Err(format!(
                            "value {v} outside bounds [{lo}, {hi}] of\n{}",
                            n.tree()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The expressions every rule is verified on, and their variables.
pub(super) fn corpus() -> (Vars, Vec<Arc<UOp>>) {
    let mut vars = Vars {
        domains: HashMap::new(),
        keep: Vec::new(),
    };
    let mut out = Vec::new();
    let mut slot = 0;
    let mut next_slot = || {
        slot += 1;
        slot
    };
    let bools = vec![ConstValue::Bool(false), ConstValue::Bool(true)];
    let p = vars.load(next_slot(), DType::BOOL, bools.clone());
    let q = vars.load(next_slot(), DType::BOOL, bools.clone());

    fold_corpus(&mut out);
    for t in [
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::Index,
    ] {
        let dt = DType::scalar(t);
        let signed = t.is_signed_int();
        let name = |v: &str| format!("{v}_{t}");
        let x = if signed {
            vars.var(&name("x"), dt, -8, 8)
        } else {
            vars.var(&name("x"), dt, 0, 16)
        };
        let y = vars.var(&name("y"), dt, 0, 8);
        let z = vars.var(&name("z"), dt, 1, 5);
        let w = vars.load(next_slot(), dt, int_domain(t));
        int_templates(
            &mut out,
            &Kit {
                x,
                y,
                z,
                w,
                p: p.clone(),
                q: q.clone(),
            },
        );
    }
    bool_templates(&mut out, &p, &q);
    for t in [
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ] {
        let dt = DType::scalar(t);
        let f = vars.load(next_slot(), dt, float_domain(t));
        let g = vars.load(next_slot(), dt, float_domain(t));
        float_templates(&mut out, &f, &g, &p);
    }
    let i8s = vars.load(next_slot(), DType::I8, int_domain(ScalarType::I8));
    let u8s = vars.load(next_slot(), DType::U8, int_domain(ScalarType::U8));
    let f16s = vars.load(next_slot(), DType::F16, float_domain(ScalarType::F16));
    let i32s = vars.load(next_slot(), DType::I32, int_domain(ScalarType::I32));
    cast_templates(&mut out, &i8s, &u8s, &f16s, &i32s);
    let a = vars.var("va", DType::INDEX, -4, 4);
    let b = vars.var("vb", DType::INDEX, 0, 6);
    vector_templates(&mut out, &a, &b);
    // Loop counters as variables: their bounds come from their ends.
    let r0 = UOp::range(&UOp::index(8), 0, AxisType::Loop);
    let r1 = UOp::range(&UOp::index(3), 1, AxisType::Reduce);
    let r0 = vars.add(r0, (0..8).map(ConstValue::Int).collect());
    let r1 = vars.add(r1, (0..3).map(ConstValue::Int).collect());
    let idx = r0.mul_const(3).add(&r1);
    out.extend([
        r0.bin(Op::Mod, &UOp::index(8)),
        r0.bin(Op::Idiv, &UOp::index(8)),
        idx.bin(Op::Idiv, &UOp::index(3)),
        idx.bin(Op::Mod, &UOp::index(3)),
        idx.bin(Op::CmpLt, &UOp::index(24)),
    ]);
    random_corpus(&mut vars, &mut out);
    (vars, out)
}

/// Variables of one integer type: x (mixed sign, or [0, 16] unsigned),
/// y in [0, 8], z in [1, 5], w unbounded, and bools p, q.
struct Kit {
    x: Arc<UOp>,
    y: Arc<UOp>,
    z: Arc<UOp>,
    w: Arc<UOp>,
    p: Arc<UOp>,
    q: Arc<UOp>,
}

/// The ALU ops constant folding evaluates (all but `Threefry`).
fn foldable_ops() -> impl Iterator<Item = Op> {
    Op::ALL.iter().copied().filter(|op| {
        matches!(
            op.group(),
            crate::uop::OpGroup::Unary | crate::uop::OpGroup::Binary | crate::uop::OpGroup::Ternary
        ) && *op != Op::Threefry
    })
}

/// Every foldable op on constants of every type it is defined on.
fn fold_corpus(out: &mut Vec<Arc<UOp>>) {
    let mut types: Vec<ScalarType> = ScalarType::ALL_DATA.to_vec();
    types.push(ScalarType::Index);
    for t in types {
        let dt = DType::scalar(t);
        let vals: Vec<ConstValue> = if t.is_float() {
            [-2.5, 0.0, 1.0, 3.0, f64::NAN]
                .map(|v| ConstValue::from_f64(v, t))
                .to_vec()
        } else {
            [-7i128, -1, 0, 2, 3]
                .map(|v| ConstValue::from_i128(v, t))
                .to_vec()
        };
        let k = |v: ConstValue| UOp::const_(dt, v);
        for op in foldable_ops() {
            match op.group() {
                crate::uop::OpGroup::Unary => {
                    out.extend(vals.iter().map(|v| k(*v).un(op)));
                }
                crate::uop::OpGroup::Binary => {
                    for a in &vals {
                        out.extend(vals.iter().map(|b| k(*a).bin(op, &k(*b))));
                    }
                }
                _ if op == Op::Where => {
                    out.push(UOp::bool_(true).where_(&k(vals[0]), &k(vals[1])));
                    out.push(UOp::bool_(false).where_(&k(vals[0]), &k(vals[1])));
                }
                _ => out.push(UOp::alu(
                    op,
                    Srcs::from_vec(vec![k(vals[1]), k(vals[3]), k(vals[4])]),
                )),
            }
        }
    }
}

fn int_templates(out: &mut Vec<Arc<UOp>>, k: &Kit) {
    let (x, y, z, w, p, q) = (&k.x, &k.y, &k.z, &k.w, &k.p, &k.q);
    let dt = x.dtype();
    let c = |v: i128| super::int_node(dt, v);
    let b = |a: &Arc<UOp>, op: Op, b: &Arc<UOp>| a.bin(op, b);
    let raw = |op: Op, src: Vec<Arc<UOp>>| UOp::alu(op, Srcs::from_vec(src));
    use Op::*;
    let neg1 = c(-1);
    let mut e = vec![
        // identities
        b(x, Add, &c(0)),
        b(&c(0), Add, w),
        b(x, Sub, &c(0)),
        b(w, Mul, &c(1)),
        b(&c(0), Mul, x),
        b(x, Idiv, &c(1)),
        b(w, Idiv, &neg1),
        b(w, Mod, &c(1)),
        b(x, Mod, &neg1),
        b(w, And, w),
        b(x, Or, x),
        b(w, Max, w),
        b(x, Min, x),
        b(w, Xor, w),
        b(w, Sub, w),
        w.un(Neg).un(Neg),
        b(x, Sub, y).un(Neg),
        b(x, Add, &c(3)).un(Neg),
        // comparisons in one form: `<=` with a constant, complements,
        // selects on `<=`
        b(x, CmpLe, &c(3)),
        b(&c(3), CmpLe, x),
        b(&b(x, CmpLt, y), Or, &b(y, CmpLe, x)),
        b(&b(x, CmpLt, &c(3)), And, &b(&c(2), CmpLt, x)),
        b(&b(w, CmpEq, y), Xor, &b(w, CmpNe, y)),
        b(x, CmpLe, y).where_(x, w),
        b(x, CmpLt, &c(1)).where_(&b(x, Mul, &c(2)), &c(2)),
        b(&c(2), CmpLt, &b(x, Idiv, &c(3))),
        b(w, And, &c(0)),
        b(&c(0), Or, w),
        b(w, Xor, &c(0)),
        b(w, Shl, &c(0)),
        b(w, Shr, &c(0)),
        b(&c(0), Shl, y),
        b(&c(0), Shr, z),
        w.un(Abs).un(Abs),
        w.un(Floor),
        x.un(Ceil),
        w.un(Round),
        x.un(Trunc),
        w.un(IsNan),
        raw(MulAcc, vec![w.clone(), c(1), x.clone()]),
        raw(MulAcc, vec![c(0), w.clone(), x.clone()]),
        raw(MulAcc, vec![w.clone(), x.clone(), c(0)]),
        // known
        b(y, CmpLt, &c(9)),
        b(y, Max, &b(z, Sub, &c(10))),
        b(x, Min, &b(y, Add, &c(9))),
        y.un(Abs),
        b(x, Sub, &c(9)).un(Abs),
        b(y, And, &c(15)),
        b(&b(y, Add, &c(1)), Idiv, &b(y, Add, &c(1))),
        b(z, Mod, z),
        b(x, Idiv, &c(9)),
        // boolean
        w.un(Not).un(Not),
        b(w, And, &c(super::all_ones(dt))),
        b(&c(super::all_ones(dt)), Or, w),
        b(w, Xor, &c(super::all_ones(dt))),
        b(w, And, &w.un(Not)),
        b(&w.un(Not), Or, w),
        b(w, Xor, &w.un(Not)),
        b(w, And, &b(x, Or, w)),
        b(&b(w, And, y), Or, w),
        b(&w.un(Not), And, &x.un(Not)),
        b(&w.un(Not), Or, &x.un(Not)),
        b(&w.un(Not), Xor, &x.un(Not)),
        b(&b(x, CmpLt, &c(3)), And, &b(x, CmpLt, &c(5))),
        b(&b(w, CmpLt, &c(3)), Or, &b(w, CmpLt, &c(-2))),
        // compare
        b(w, CmpLt, w),
        b(w, CmpLe, w),
        b(w, CmpEq, w),
        b(w, CmpNe, w),
        b(x, CmpLt, y).un(Not),
        b(w, CmpLe, y).un(Not),
        b(x, CmpEq, w).un(Not),
        b(x, CmpNe, w).un(Not),
        b(&b(x, Add, &c(3)), CmpLt, &c(5)),
        b(&c(2), CmpLt, &b(x, Add, &c(3))),
        b(&b(w, Add, &c(3)), CmpEq, &c(5)),
        b(&c(5), CmpNe, &b(&c(7), Add, w)),
        b(&b(w, Xor, &c(5)), CmpEq, &c(3)),
        b(&b(x, Mul, &c(3)), CmpLt, &c(7)),
        b(&b(x, Mul, &c(3)), CmpLt, &c(-7)),
        b(&b(x, Idiv, &c(3)), CmpLt, &c(2)),
        b(&b(w, Idiv, &c(4)), CmpLt, &c(3)),
        b(&x.un(Neg), CmpLt, &c(3)),
        b(&w.un(Neg), CmpLt, &c(3)),
        b(y, CmpNe, &c(8)),
        b(&c(0), CmpNe, y),
        // select
        UOp::bool_(true).where_(x, y),
        p.where_(w, w),
        p.where_(&b(x, Add, y), &b(x, Mul, &c(2))),
        p.un(Not).where_(x, w),
        p.where_(&p.where_(x, w), y),
        p.where_(x, &p.where_(w, y)),
        p.where_(&q.where_(x, y), y),
        p.where_(x, &q.where_(x, w)),
        b(x, CmpLt, w).where_(x, w),
        b(x, CmpLt, w).where_(w, x),
        b(&p.where_(&c(3), &c(5)), Add, &c(2)),
        b(&c(2), Mul, &p.where_(&c(3), &c(-5))),
        b(&p.where_(&c(3), &c(5)), CmpLt, &c(4)),
        // reassoc
        b(&b(w, Add, &c(3)), Add, &c(4)),
        b(&c(4), Mul, &b(&c(3), Mul, w)),
        b(&b(w, Add, &c(3)), Add, x),
        b(y, Mul, &b(w, Mul, &c(3))),
        b(w, Sub, &c(3)),
        b(&b(w, Add, &c(3)), Mul, &c(4)),
        b(&b(w, Mul, &c(3)), Add, &b(w, Mul, &c(4))),
        b(w, Add, w),
        b(&b(w, Mul, &c(3)), Add, w),
        b(w, Mul, &c(3)).un(Neg),
        b(&b(w, Add, x), Sub, x),
        b(&b(w, Add, x), Sub, w),
        b(&b(w, Sub, x), Add, x),
        b(w, Add, &x.un(Neg)),
        b(w, Sub, &x.un(Neg)),
        b(&b(w, Max, &c(3)), Max, &c(5)),
        b(&c(5), Min, &b(w, Min, &c(3))),
        // divmod
        b(y, Mod, &c(9)),
        b(x, Mod, &c(9)),
        b(&b(y, Add, &c(20)), Mod, &c(16)),
        b(&b(x, Sub, &c(20)), Mod, &c(16)),
        b(x, Idiv, &c(-3)),
        b(w, Idiv, &c(-3)),
        b(x, Mod, &c(-3)),
        b(w, Mod, &c(-4)),
        b(&b(w, Idiv, &c(2)), Idiv, &c(3)),
        b(&b(w, Mod, &c(6)), Mod, &c(3)),
        b(&b(w, Mod, &c(6)), Idiv, &c(3)),
        b(&b(&b(w, Idiv, &c(4)), Mul, &c(4)), Add, &b(w, Mod, &c(4))),
        b(&b(x, Mod, &c(3)), Add, &b(&c(3), Mul, &b(x, Idiv, &c(3)))),
        b(
            &b(&b(&b(w, Idiv, &c(4)), Mod, &c(3)), Mul, &c(4)),
            Add,
            &b(w, Mod, &c(4)),
        ),
        b(&b(&b(y, Mul, &c(4)), Add, z), Idiv, &c(4)),
        b(&b(&b(y, Mul, &c(4)), Add, &c(3)), Idiv, &c(4)),
        b(&b(&b(y, Mul, &c(4)), Add, z), Mod, &c(4)),
        b(&b(&b(y, Mul, &c(4)), Add, &c(2)), Mod, &c(4)),
        b(&b(&b(y, Mul, &c(-4)), Sub, z), Idiv, &c(4)),
        b(&b(&b(x, Mul, &c(6)), Add, &b(z, Mul, &c(4))), Idiv, &c(2)),
        b(&b(&b(x, Mul, &c(6)), Add, &b(z, Mul, &c(4))), Idiv, &c(4)),
        b(&b(&b(x, Mul, &c(6)), Add, &b(z, Mul, &c(4))), Mod, &c(4)),
        b(&b(x, Mul, &c(4)), Mod, &c(2)),
        b(&b(w, Mul, &c(4)), Idiv, &c(4)),
        b(&b(&b(y, Mul, &c(16)), Add, z), Idiv, &c(16)),
        // congruence: affine quotients, factor splits, symbolic divisors
        b(&b(&b(z, Mul, &c(3)), Add, &c(3)), Idiv, &c(4)),
        b(&b(&b(z, Mul, &c(3)), Add, &c(3)), Mod, &c(4)),
        b(&b(&b(z, Mul, &c(4)), Add, &c(1)), Idiv, &c(4)),
        b(
            &b(&b(y, Mul, &c(4)), Add, &b(&b(z, Mod, &c(2)), Add, &c(1))),
            Mod,
            &c(8),
        ),
        b(
            &b(&b(y, Mul, &c(4)), Add, &b(&b(z, Mod, &c(2)), Add, &c(1))),
            Idiv,
            &c(8),
        ),
        b(&b(&b(y, Mul, &c(4)), Add, &b(y, Mul, &c(2))), Idiv, &c(10)),
        b(&b(&b(z, Mul, y), Add, y), Idiv, z),
        b(&b(&b(z, Mul, y), Add, y), Mod, z),
        // terms: like terms, recombination, comparisons of sums
        b(&b(&b(y, Mul, &c(2)), Add, x), Add, &b(y, Mul, &c(3))),
        b(
            &b(x, Add, &b(y, Mod, &c(4))),
            Add,
            &b(&b(y, Idiv, &c(4)), Mul, &c(4)),
        ),
        b(
            &b(&b(y, Mod, &c(4)), Mul, &c(3)),
            Add,
            &b(&b(&b(y, Idiv, &c(4)), Mod, &c(2)), Mul, &c(12)),
        ),
        b(&b(&b(y, Mul, &c(4)), Add, &b(z, Mod, &c(2))), CmpLt, &c(12)),
        b(&b(&b(y, Mul, &c(6)), Add, &b(z, Mul, &c(6))), CmpLt, &c(8)),
        b(&c(11), CmpLt, &b(&b(y, Mul, &c(4)), Add, &b(z, Mod, &c(2)))),
        b(&b(y, Mul, &c(4)), CmpLt, &c(13)),
        b(&c(11), CmpLt, &b(y, Mul, &c(4))),
        b(&b(y, Mul, &c(4)), CmpLe, &c(13)),
        b(&c(12), CmpLe, &b(y, Mul, &c(4))),
        b(&b(&b(y, Mul, &c(4)), Add, &c(1)), CmpLe, &c(13)),
        b(&c(12), CmpLe, &b(&b(y, Mul, &c(4)), Add, &c(1))),
        // bool casts, xor, selects on one condition
        b(&p.cast(dt), CmpNe, &c(0)),
        b(&c(0), CmpLt, &p.cast(dt)),
        b(&b(x, Xor, y), Xor, y),
        b(&p.where_(x, &c(0)), Add, &p.where_(y, &c(1))),
        p.where_(
            &b(&p.where_(x, y), Mul, &c(2)),
            &b(&p.where_(x, y), Add, &c(1)),
        ),
    ];
    if dt.is_unsigned() {
        // Constant-sign assumptions above are meaningless for unsigned
        // types but the expressions still have to keep their values.
        e.push(b(w, Idiv, &c(3)));
    }
    out.extend(e);
}

fn bool_templates(out: &mut Vec<Arc<UOp>>, p: &Arc<UOp>, q: &Arc<UOp>) {
    use Op::*;
    let t = UOp::bool_(true);
    let f = UOp::bool_(false);
    out.extend([
        p.un(Not).un(Not),
        p.bin(And, &t),
        t.bin(Or, p),
        p.bin(Xor, &t),
        p.bin(And, &f),
        p.bin(And, &p.un(Not)),
        p.bin(CmpEq, &t),
        f.bin(CmpEq, p),
        p.bin(CmpNe, &f),
        p.bin(CmpNe, &t),
        p.bin(Add, q),
        p.bin(Max, q),
        p.bin(Mul, q),
        p.bin(Min, q),
        p.bin(CmpLt, q).un(Not),
        p.where_(&t, &f),
        p.where_(&f, &t),
        p.where_(q, &f),
        p.where_(&t, q),
        p.where_(q, &t),
        p.where_(&f, q),
        p.bin(Idiv, &t),
        p.bin(Sub, p),
        p.bin(Mod, &t),
        p.bin(Or, &p.un(Not)),
        p.bin(And, &p.un(Not)),
    ]);
}

fn float_templates(out: &mut Vec<Arc<UOp>>, f: &Arc<UOp>, g: &Arc<UOp>, p: &Arc<UOp>) {
    use Op::*;
    let dt = f.dtype();
    let c = |v: f64| UOp::const_f64(dt, v);
    let raw = |op: Op, src: Vec<Arc<UOp>>| UOp::alu(op, Srcs::from_vec(src));
    out.extend([
        f.bin(Add, &c(-0.0)),
        f.bin(Add, &c(0.0)),
        f.bin(Sub, &c(0.0)),
        f.bin(Sub, &c(-0.0)),
        f.bin(Mul, &c(1.0)),
        f.bin(Mul, &c(0.0)),
        f.bin(Fdiv, &c(1.0)),
        f.bin(Max, f),
        f.bin(Min, f),
        f.bin(Sub, f),
        f.un(Neg).un(Neg),
        f.bin(Sub, g).un(Neg),
        f.un(Abs).un(Abs),
        f.un(Floor).un(Floor),
        f.un(Ceil).un(Round),
        f.un(Trunc).un(Ceil),
        f.un(Round).un(Trunc),
        raw(MulAcc, vec![f.clone(), c(1.0), g.clone()]),
        raw(MulAcc, vec![c(1.0), f.clone(), g.clone()]),
        raw(MulAcc, vec![f.clone(), g.clone(), c(0.0)]),
        f.bin(Pow, &c(1.0)),
        f.bin(Pow, &c(0.0)),
        f.bin(Pow, &c(-0.0)),
        f.bin(CmpLt, f),
        f.bin(CmpLe, f),
        f.bin(CmpEq, f),
        f.bin(CmpNe, f),
        f.bin(CmpLt, g).un(Not),
        f.bin(CmpEq, g).un(Not),
        f.bin(CmpNe, g).un(Not),
        f.bin(CmpLt, g).where_(f, g),
        p.where_(f, f),
        p.where_(&p.where_(f, g), f),
        f.bin(Add, &g.un(Neg)),
        f.bin(Sub, &g.un(Neg)),
        f.bin(Add, f),
        f.bin(CmpLt, &c(1.0)).bin(And, &f.bin(CmpLt, &c(2.0))),
        f.bin(CmpLt, &c(1.0)).bin(Or, &f.bin(CmpLt, &c(-2.5))),
        f.bin(Max, &c(1.0)).bin(Max, &c(2.0)),
        p.where_(&c(1.5), &c(2.0)).bin(Mul, &c(4.0)),
    ]);
}

fn cast_templates(
    out: &mut Vec<Arc<UOp>>,
    i8s: &Arc<UOp>,
    u8s: &Arc<UOp>,
    f16s: &Arc<UOp>,
    i32s: &Arc<UOp>,
) {
    let cast_same = |x: &Arc<UOp>| {
        UOp::new(
            Op::Cast,
            x.dtype(),
            Srcs::from_elem(x.clone(), 1),
            Arg::None,
        )
    };
    out.extend([
        UOp::const_f64(DType::F32, 300.7).cast(DType::U8),
        UOp::const_f64(DType::F32, 200.7).cast(DType::U8),
        UOp::const_f64(DType::F64, f64::NAN).cast(DType::I32),
        UOp::index(300).cast(DType::I8),
        UOp::index(2049).cast(DType::F16),
        UOp::bool_(true).cast(DType::F32),
        cast_same(i8s),
        UOp::new(
            Op::Bitcast,
            DType::I32,
            Srcs::from_elem(i32s.clone(), 1),
            Arg::None,
        ),
        i8s.cast(DType::I16).cast(DType::I32),
        i8s.cast(DType::I32).cast(DType::U8),
        i8s.cast(DType::I16).cast(DType::I8),
        u8s.cast(DType::F32).cast(DType::I32),
        // Through a float, a negative value saturates at an unsigned
        // type's 0 where a direct cast wraps: no fold.
        i8s.cast(DType::F16).cast(DType::U64),
        i8s.cast(DType::F32).cast(DType::U8),
        i8s.cast(DType::F16).cast(DType::I32),
        u8s.cast(DType::BF16).cast(DType::F16),
        i8s.cast(DType::U8).cast(DType::I32),
        i32s.cast(DType::F32).cast(DType::F64),
        i32s.cast(DType::F64).cast(DType::F32),
        i32s.cast(DType::I8).cast(DType::I32),
        f16s.cast(DType::F32).cast(DType::F64),
        f16s.cast(DType::F32).cast(DType::I16),
        f16s.cast(DType::F32).cast(DType::F16),
        f16s.cast(DType::BF16).cast(DType::F32),
        UOp::const_f64(DType::F32, 1.0).bitcast(DType::U32),
        UOp::const_(DType::U16, ConstValue::UInt(0x3c00)).bitcast(DType::F16),
        i32s.bitcast(DType::F32).bitcast(DType::U32),
        i32s.bitcast(DType::F32).bitcast(DType::I32),
        f16s.bitcast(DType::I16).bitcast(DType::BF16),
    ]);
}

fn vector_templates(out: &mut Vec<Arc<UOp>>, a: &Arc<UOp>, b: &Arc<UOp>) {
    let dt = DType::INDEX;
    let vec = |src: Vec<Arc<UOp>>| {
        UOp::new(
            Op::Vectorize,
            dt.vec(src.len() as u16),
            Srcs::from_vec(src),
            Arg::None,
        )
    };
    let gep = |x: &Arc<UOp>, idx: &[usize]| {
        UOp::new(
            Op::Gep,
            x.dtype().base().vec(idx.len() as u16),
            Srcs::from_elem(x.clone(), 1),
            Arg::Axes(idx.iter().copied().collect()),
        )
    };
    let v = vec(vec![a.clone(), b.clone(), a.add_const(1), b.mul_const(2)]);
    let v2 = vec(vec![b.clone(), a.clone(), a.clone(), b.clone()]);
    let vc = UOp::new(
        Op::VConst,
        dt.vec(4),
        Srcs::new(),
        Arg::Consts([1, 2, 3, 4].map(ConstValue::Int).into_iter().collect()),
    );
    let k = UOp::const_(dt.vec(4), ConstValue::Int(7));
    out.extend([
        gep(&v, &[1]),
        gep(&v, &[2, 0]),
        gep(&k, &[1, 3]),
        gep(&vc, &[1]),
        gep(&vc, &[3, 0]),
        gep(&vc, &[2, 2]),
        gep(&gep(&v, &[2, 3]), &[1]),
        gep(&v, &[0, 1, 2, 3]),
        gep(&v.add(&v2), &[1]),
        gep(&v.bin(Op::CmpLt, &v2), &[0, 2]),
        vec(vec![UOp::index(1), UOp::index(1), UOp::index(1)]),
        vec(vec![UOp::index(1), UOp::index(2)]),
        vec((0..4).map(|i| gep(&v2, &[i])).collect()),
        vec(vec![gep(&v2, &[3]), gep(&v2, &[1])]),
        v.add(&k).bin(Op::Mul, &v2),
    ]);
}

/// A deterministic xorshift generator from `seed`: each call gives a
/// number in `0..n`.
pub(super) fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

/// Deterministic random expressions over a few variables, to catch rules
/// misfiring in combinations no template anticipated.
fn random_corpus(vars: &mut Vars, out: &mut Vec<Arc<UOp>>) {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    use Op::*;
    let ops = [
        Add, Sub, Mul, Idiv, Mod, Max, Min, And, Or, Xor, CmpLt, CmpNe, Where,
    ];
    for t in [ScalarType::I8, ScalarType::U8, ScalarType::Index] {
        let dt = DType::scalar(t);
        let leaves = [
            vars.var(
                &format!("r0_{t}"),
                dt,
                if t.is_unsigned() { 0 } else { -6 },
                6,
            ),
            vars.var(&format!("r1_{t}"), dt, 0, 9),
            vars.load(100 + t as i64, dt, int_domain(t)),
        ];
        for _ in 0..600 {
            let mut pool: Vec<Arc<UOp>> = leaves.to_vec();
            for _ in 0..4 {
                let pick = |k: usize, pool: &Vec<Arc<UOp>>| -> Arc<UOp> {
                    match k % 3 {
                        0 => super::int_node(dt, (k as i128 % 11) - 3),
                        _ => pool[k % pool.len()].clone(),
                    }
                };
                let a = pick(next(64), &pool);
                let b = pick(next(64), &pool);
                let op = ops[next(ops.len())];
                let e = match op {
                    CmpLt | CmpNe => a.bin(op, &b).where_(&a, &b),
                    Where => a.bin(CmpLt, &b).where_(&b, &pick(next(64), &pool)),
                    _ => a.bin(op, &b),
                };
                pool.push(e);
            }
            out.push(pool.pop().expect("the pool is never empty"));
        }
    }
}

#[test]
fn every_rule_fires_and_preserves_values() {
    let (vars, corpus) = corpus();
    let nodes: Vec<Arc<UOp>> = {
        let mut seen = std::collections::HashSet::new();
        corpus
            .iter()
            .flat_map(|e| e.toposort())
            .filter(|n| seen.insert(n.id()))
            .collect()
    };
    let mut stats = Stats::default();
    let mut unfired = Vec::new();
    let mut failures = Vec::new();
    let mut rules = 0;
    let per_category: Vec<String> = categories()
        .iter()
        .map(|c| format!("{} {}", c.name(), c.len()))
        .collect();
    report(&format!(
        "symbolic rules per category: {}",
        per_category.join(", ")
    ));
    for category in categories() {
        for rule in category.split() {
            rules += 1;
            let mut fired = 0;
            for n in &nodes {
                let Some(new) = rule
                    .rewrite(n, &mut ())
                    .expect("symbolic rules do not fail")
                else {
                    continue;
                };
                fired += 1;
                match check_equivalent(&vars, n, &new) {
                    Ok(cases) => stats.cases += cases,
                    Err(e) => failures.push(format!("rule {}: {e}", rule.name())),
                }
            }
            stats.firings += fired;
            if fired == 0 {
                unfired.push(rule.name().to_string());
            }
        }
    }
    report(&format!(
        "symbolic: {rules} rules; {} rule applications verified on {} assignments ({} corpus nodes)",
        stats.firings,
        stats.cases,
        nodes.len()
    ));
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n\n")
    );
    assert!(
        unfired.is_empty(),
        "rules that never fire on the corpus: {unfired:?}"
    );
    assert_eq!(rules, super::rule_count());
    assert!(rules >= 100, "only {rules} rules");
}

#[test]
fn simplify_preserves_values_on_the_corpus() {
    let (vars, corpus) = corpus();
    let mut cases = 0;
    for e in &corpus {
        let s = simplify(e).expect("simplification converges");
        match check_equivalent(&vars, e, &s) {
            Ok(n) => cases += n,
            Err(err) => panic!("simplify changed a value: {err}"),
        }
    }
    report(&format!(
        "symbolic: simplify verified on {} expressions, {cases} assignments",
        corpus.len()
    ));
}

#[test]
fn bounds_contain_every_value_on_the_corpus() {
    let (vars, corpus) = corpus();
    for e in &corpus {
        if let Err(err) = check_bounds(&vars, e) {
            panic!("{err}");
        }
    }
}

/// With the `z3` feature: every integer rule application of the corpus that
/// involves variables is proven for *all* values of its variables within
/// their bounds (full bit-vector width, wrap-around included), not only the
/// sampled ones. (Applications on constants alone are exhaustively checked
/// by evaluation already.) A query Z3 gives up on (64-bit nonlinear
/// division can time out) is reported, not failed; a counterexample fails.
#[cfg(feature = "z3")]
#[test]
fn integer_rule_applications_are_proven_by_z3() {
    use super::prove::{Outcome, Prover};
    let prover = Prover::new();
    let (_vars, corpus) = corpus();
    let mut seen = std::collections::HashSet::new();
    let nodes: Vec<Arc<UOp>> = corpus
        .iter()
        .flat_map(|e| e.toposort())
        .filter(|n| seen.insert(n.id()))
        .collect();
    let (mut proven, mut unknown, mut rules_proven, mut failures) = (0, 0, 0, Vec::new());
    let has_leaf = |n: &Arc<UOp>| {
        n.toposort()
            .iter()
            .any(|m| matches!(m.op(), Op::DefineVar | Op::Load | Op::Range))
    };
    for category in categories() {
        for rule in category.split() {
            let mut any = false;
            for n in &nodes {
                let Some(new) = rule
                    .rewrite(n, &mut ())
                    .expect("symbolic rules do not fail")
                else {
                    continue;
                };
                if !has_leaf(n) {
                    continue;
                }
                match prover.prove_equivalent(n, &new) {
                    Outcome::Proven => {
                        proven += 1;
                        any = true;
                    }
                    Outcome::Unsupported => {}
                    Outcome::Unknown => unknown += 1,
                    other => failures.push(format!(
                        "rule {}: {other:?}\nbefore:\n{}after:\n{}",
                        rule.name(),
                        n.tree(),
                        new.tree()
                    )),
                }
            }
            rules_proven += any as usize;
        }
    }
    let msg = format!(
        "symbolic/z3: {proven} integer rule applications proven ({unknown} undecided), \
         covering {rules_proven} rules"
    );
    report(&msg);
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(5)].join("\n\n")
    );
    assert!(
        rules_proven >= 80,
        "only {rules_proven} rules have a proven application"
    );
    assert!(
        unknown * 100 <= proven,
        "too many undecided queries: {unknown}"
    );
}
