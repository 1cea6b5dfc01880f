//! Proofs of integer rewrites with the Z3 SMT solver (feature `z3`).
//!
//! [`Prover::prove_equivalent`] translates the graphs before and after a rewrite
//! into bit-vector formulas of each dtype's width (so wrap-around is
//! modelled exactly, `Index` as 64 bits) and asks Z3 whether some values of
//! the free leaves, within their bounds (`DEFINE_VAR` ranges, loop ranges,
//! anything [`bounds`](super::bounds) knows), make the original defined
//! and the rewrite either undefined or different. "Undefined" follows
//! [`exec_alu`](super::eval::exec_alu): division or modulo by zero,
//! `MIN / -1`, shifts by at least the width.
//!
//! Only integer and bool graphs are translated; anything else (floats,
//! vectors, memory) is reported as [`Outcome::Unsupported`].

use super::bounds::int_bounds;
use crate::uop::{ConstValue, Op, UOp};
use std::collections::HashMap;
use std::sync::Arc;
use z3::ast::{Ast, Bool, BV};
use z3::{Config, Context, SatResult, Solver};

/// The result of [`Prover::prove_equivalent`].
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The rewrite preserves every defined value.
    Proven,
    /// Z3 found leaf values where the values differ (the model, printed).
    Counterexample(String),
    /// The graphs use ops or types the translation does not cover.
    Unsupported,
    /// Z3 gave up (timeout or incompleteness).
    Unknown,
}

/// A translated value.
#[derive(Clone)]
enum Val<'c> {
    B(Bool<'c>),
    V(BV<'c>),
}

struct Translator<'c> {
    ctx: &'c Context,
    vals: HashMap<u64, Val<'c>>,
    /// Facts about the leaves (their bounds).
    assumptions: Vec<Bool<'c>>,
    /// Conditions under which each translated graph is defined.
    defined: Bool<'c>,
}

fn bits(n: &UOp) -> Option<u32> {
    let t = n.dtype();
    (!t.is_ptr() && !t.is_vector() && t.is_int()).then(|| t.scalar_type().bits())
}

/// Nodes whose value is a free variable of the formula.
fn is_leaf(n: &UOp) -> bool {
    matches!(n.op(), Op::DefineVar | Op::Range | Op::Load | Op::Special)
}

fn signed(n: &UOp) -> bool {
    n.dtype().scalar_type().is_signed_int()
}

impl<'c> Translator<'c> {
    fn bv_const(&self, v: i128, w: u32) -> BV<'c> {
        BV::from_u64(self.ctx, v as u64, w)
    }

    /// A fresh leaf constrained to its bounds.
    fn leaf(&mut self, n: &Arc<UOp>) -> Option<Val<'c>> {
        let name = format!("n{}", n.id());
        if n.dtype().is_bool() && !n.dtype().is_vector() {
            return Some(Val::B(Bool::new_const(self.ctx, name)));
        }
        let w = bits(n)?;
        let v = BV::new_const(self.ctx, name, w);
        let (lo, hi) = int_bounds(n)?;
        let (lo, hi) = (self.bv_const(lo, w), self.bv_const(hi, w));
        let fact = if signed(n) {
            Bool::and(self.ctx, &[&lo.bvsle(&v), &v.bvsle(&hi)])
        } else {
            Bool::and(self.ctx, &[&lo.bvule(&v), &v.bvule(&hi)])
        };
        self.assumptions.push(fact);
        Some(Val::V(v))
    }

    fn require(&mut self, cond: Bool<'c>) {
        self.defined = Bool::and(self.ctx, &[&self.defined, &cond]);
    }

    /// Translates `root` bottom-up; the operands of leaves (a LOAD's
    /// address) are not visited.
    fn translate(&mut self, root: &Arc<UOp>) -> Option<Val<'c>> {
        let mut stack = vec![(root.clone(), false)];
        while let Some((n, operands_done)) = stack.pop() {
            if self.vals.contains_key(&n.id()) {
                continue;
            }
            if operands_done || is_leaf(&n) {
                let v = self.node(&n)?;
                self.vals.insert(n.id(), v);
                continue;
            }
            stack.push((n.clone(), true));
            stack.extend(n.src().iter().map(|s| (s.clone(), false)));
        }
        self.vals.get(&root.id()).cloned()
    }

    fn node(&mut self, n: &Arc<UOp>) -> Option<Val<'c>> {
        let ctx = self.ctx;
        let src: Vec<Val<'c>> = if is_leaf(n) {
            Vec::new()
        } else {
            n.src()
                .iter()
                .map(|s| self.vals.get(&s.id()).cloned())
                .collect::<Option<_>>()?
        };
        let bv = |i: usize| match &src[i] {
            Val::V(v) => Some(v.clone()),
            Val::B(_) => None,
        };
        let bo = |i: usize| match &src[i] {
            Val::B(b) => Some(b.clone()),
            Val::V(_) => None,
        };
        if n.dtype().is_vector() || n.dtype().is_ptr() {
            return None;
        }
        if let Some(c) = n.const_value() {
            return match (c, bits(n)) {
                (ConstValue::Bool(b), _) => Some(Val::B(Bool::from_bool(ctx, b))),
                (c, Some(w)) => Some(Val::V(self.bv_const(c.as_i128()?, w))),
                _ => None,
            };
        }
        let op = n.op();
        if is_leaf(n) {
            return self.leaf(n);
        }
        // Comparisons and bool-typed logic.
        let operand_signed = n.src().first().is_some_and(|s| signed(s));
        match op {
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe => {
                let r = match (&src[0], &src[1]) {
                    (Val::V(a), Val::V(b)) => match (op, operand_signed) {
                        (Op::CmpLt, true) => a.bvslt(b),
                        (Op::CmpLt, false) => a.bvult(b),
                        (Op::CmpLe, true) => a.bvsle(b),
                        (Op::CmpLe, false) => a.bvule(b),
                        (Op::CmpEq, _) => a._eq(b),
                        _ => a._eq(b).not(),
                    },
                    (Val::B(a), Val::B(b)) => match op {
                        Op::CmpLt => Bool::and(ctx, &[&a.not(), b]),
                        Op::CmpLe => Bool::or(ctx, &[&a.not(), b]),
                        Op::CmpEq => a._eq(b),
                        _ => a.xor(b),
                    },
                    _ => return None,
                };
                return Some(Val::B(r));
            }
            Op::Where => {
                let c = bo(0)?;
                return Some(match (&src[1], &src[2]) {
                    (Val::V(a), Val::V(b)) => Val::V(c.ite(a, b)),
                    (Val::B(a), Val::B(b)) => Val::B(c.ite(a, b)),
                    _ => return None,
                });
            }
            Op::IsNan => return Some(Val::B(Bool::from_bool(ctx, false))),
            Op::Cast => return self.cast(n, &src[0]),
            _ => {}
        }
        if n.dtype().is_bool() {
            let a = bo(0)?;
            let b = || bo(1);
            return Some(Val::B(match op {
                Op::Not | Op::Neg => a.not(),
                Op::Abs | Op::Floor | Op::Ceil | Op::Round | Op::Trunc => a,
                Op::And | Op::Mul | Op::Min => Bool::and(ctx, &[&a, &b()?]),
                Op::Or | Op::Add | Op::Max => Bool::or(ctx, &[&a, &b()?]),
                Op::Xor | Op::Sub => a.xor(&b()?),
                _ => return None,
            }));
        }
        let w = bits(n)?;
        let s = signed(n);
        let a = bv(0)?;
        let b = || bv(1);
        let zero = self.bv_const(0, w);
        let r = match op {
            Op::Neg => a.bvneg(),
            Op::Not => a.bvnot(),
            Op::Abs if s => a.bvslt(&zero).ite(&a.bvneg(), &a),
            Op::Abs => a,
            Op::Floor | Op::Ceil | Op::Round | Op::Trunc => a,
            Op::Add => a.bvadd(&b()?),
            Op::Sub => a.bvsub(&b()?),
            Op::Mul => a.bvmul(&b()?),
            Op::MulAcc => a.bvmul(&b()?).bvadd(&bv(2)?),
            Op::And => a.bvand(&b()?),
            Op::Or => a.bvor(&b()?),
            Op::Xor => a.bvxor(&b()?),
            Op::Max | Op::Min => {
                let b = b()?;
                let lt = if s { a.bvslt(&b) } else { a.bvult(&b) };
                if op == Op::Max {
                    lt.ite(&b, &a)
                } else {
                    lt.ite(&a, &b)
                }
            }
            Op::Idiv | Op::Mod => {
                let b = b()?;
                self.require(b._eq(&zero).not());
                if s {
                    let min = self.bv_const(n.dtype().scalar_type().min_int(), w);
                    let minus_one = self.bv_const(-1, w);
                    let overflow = Bool::and(ctx, &[&a._eq(&min), &b._eq(&minus_one)]);
                    self.require(overflow.not());
                }
                match (op, s) {
                    (Op::Idiv, true) => a.bvsdiv(&b),
                    (Op::Idiv, false) => a.bvudiv(&b),
                    (_, true) => a.bvsrem(&b),
                    (_, false) => a.bvurem(&b),
                }
            }
            Op::Shl | Op::Shr => {
                let b = b()?;
                // A negative amount is a huge unsigned one: one check covers both.
                self.require(b.bvult(&self.bv_const(w as i128, w)));
                match (op, s) {
                    (Op::Shl, _) => a.bvshl(&b),
                    (_, true) => a.bvashr(&b),
                    (_, false) => a.bvlshr(&b),
                }
            }
            _ => return None,
        };
        Some(Val::V(r))
    }

    /// Integer and bool conversions (C semantics: wrap, `!= 0` for bool).
    fn cast(&mut self, n: &Arc<UOp>, v: &Val<'c>) -> Option<Val<'c>> {
        let from = n.s(0);
        match v {
            Val::B(b) => {
                let w = bits(n)?;
                Some(Val::V(b.ite(&self.bv_const(1, w), &self.bv_const(0, w))))
            }
            Val::V(x) if n.dtype().is_bool() => {
                Some(Val::B(x._eq(&self.bv_const(0, bits(from)?)).not()))
            }
            Val::V(x) => {
                let (fw, tw) = (bits(from)?, bits(n)?);
                Some(Val::V(if tw < fw {
                    x.extract(tw - 1, 0)
                } else if tw == fw {
                    x.clone()
                } else if signed(from) {
                    x.sign_ext(tw - fw)
                } else {
                    x.zero_ext(tw - fw)
                }))
            }
        }
    }
}

/// A Z3 context for a series of proofs (creating one is the expensive
/// part of a small proof).
pub struct Prover {
    ctx: Context,
}

impl Default for Prover {
    fn default() -> Self {
        Prover::new()
    }
}

impl Prover {
    /// A prover whose queries give up after two seconds each.
    pub fn new() -> Prover {
        let mut cfg = Config::new();
        cfg.set_timeout_msec(2_000);
        Prover {
            ctx: Context::new(&cfg),
        }
    }

    /// Proves that `after` equals `before` for every value of the leaves
    /// within their bounds where `before` is defined.
    pub fn prove_equivalent(&self, before: &Arc<UOp>, after: &Arc<UOp>) -> Outcome {
        let ctx = &self.ctx;
        let mut tr = Translator {
            ctx,
            vals: HashMap::new(),
            assumptions: Vec::new(),
            defined: Bool::from_bool(ctx, true),
        };
        let Some(vb) = tr.translate(before) else {
            return Outcome::Unsupported;
        };
        let defined_before = std::mem::replace(&mut tr.defined, Bool::from_bool(ctx, true));
        let Some(va) = tr.translate(after) else {
            return Outcome::Unsupported;
        };
        let defined_after = tr.defined.clone();
        let equal = match (&vb, &va) {
            (Val::V(a), Val::V(b)) => a._eq(b),
            (Val::B(a), Val::B(b)) => a._eq(b),
            _ => return Outcome::Counterexample("the value's sort changed".into()),
        };
        let solver = Solver::new_for_logic(ctx, "QF_BV").unwrap_or_else(|| Solver::new(ctx));
        for fact in &tr.assumptions {
            solver.assert(fact);
        }
        solver.assert(&defined_before);
        solver.assert(&Bool::and(ctx, &[&defined_after, &equal]).not());
        match solver.check() {
            SatResult::Unsat => Outcome::Proven,
            SatResult::Sat => Outcome::Counterexample(
                solver
                    .get_model()
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
            ),
            SatResult::Unknown => Outcome::Unknown,
        }
    }
}
