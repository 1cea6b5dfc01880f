//! Symbolic simplification: constant folding, algebraic identities and
//! index algebra, as pattern rules over the UOp graph.
//!
//! - [`eval`]: constant evaluation with the target's exact semantics;
//! - [`bounds`]: value bounds (`vmin`/`vmax`) by interval arithmetic;
//! - `interp` (feature `testing`): a reference interpreter built on [`eval`];
//! - one rule set per category: [`fold`](fold::fold) (constant folding),
//!   [`known`](known::known) (values decided by bounds),
//!   [`identities`](identities::identities), [`boolean`](boolean::boolean),
//!   [`compare`](compare::compare), [`select`](select::select) (WHERE),
//!   [`cast`](cast::cast), [`vector`](vector::vector) (GEP and vectors),
//!   [`reassoc`](reassoc::reassoc) (constant reassociation and term
//!   collection), [`divmod`](divmod::divmod) (division and modulo) and
//!   [`congruence`](congruence::congruence) (division and modulo by
//!   congruence: affine quotients, factor splits, symbolic divisors),
//!   [`terms`](terms::terms) (like terms, recombination inside sums,
//!   comparisons of sums);
//! - [`symbolic`]: all of them, in that order, and [`simplify`].
//!
//! Integer rules respect wrap-around: a rule that only holds without
//! overflow checks, with exact interval arithmetic on the operands' bounds,
//! that no value involved can leave the dtype's range. Every rule is
//! checked by evaluation on a corpus of expressions over small domains and
//! narrow types (`verify`, a test module) and, with the `z3` feature, the
//! integer rules are proven with an SMT solver.

pub mod bounds;
pub mod eval;
pub mod gate;
pub mod interp;
pub mod interval;
pub mod linear;

pub mod boolean;
pub mod cast;
pub mod compare;
pub mod congruence;
pub mod divmod;
pub mod fold;
pub mod identities;
pub mod known;
pub mod reassoc;
pub mod select;
pub mod terms;
pub mod vector;

// The SMT proofs serve the rule checks of `verify` (tests) only.
#[cfg(all(test, feature = "z3"))]
mod prove;

#[cfg(any(test, feature = "testing"))]
pub mod order;
#[cfg(test)]
mod verify;

use crate::dtype::DType;
use crate::rewrite::{graph_rewrite, PatternMatcher, RewriteError};
use crate::uop::{ConstValue, Op, UOp};
use std::sync::{Arc, OnceLock};

/// Every rule category, in the order [`symbolic`] applies them.
pub fn categories() -> Vec<PatternMatcher> {
    vec![
        fold::fold(),
        known::known(),
        identities::identities(),
        boolean::boolean(),
        compare::compare(),
        select::select(),
        cast::cast(),
        vector::vector(),
        reassoc::reassoc(),
        divmod::divmod(),
        congruence::congruence(),
        terms::terms(),
    ]
}

/// The general-purpose simplification rules, usable at every level: all
/// rule categories of this module combined.
pub fn symbolic() -> PatternMatcher {
    let mut pm = PatternMatcher::new("symbolic");
    for c in categories() {
        pm.extend(&c);
    }
    pm
}

/// Number of rules in [`symbolic`].
pub fn rule_count() -> usize {
    categories().iter().map(PatternMatcher::len).sum()
}

/// Simplifies `root` with [`symbolic`] to a fixpoint.
pub fn simplify(root: &Arc<UOp>) -> Result<Arc<UOp>, RewriteError> {
    static PM: OnceLock<PatternMatcher> = OnceLock::new();
    graph_rewrite(PM.get_or_init(symbolic), root, &mut ())
}

// ---- helpers shared by the rule files ----

/// A constant of `dtype` from an integer (wrapped to the type).
fn int_node(dtype: DType, v: i128) -> Arc<UOp> {
    UOp::const_(dtype, ConstValue::from_i128(v, dtype.scalar_type()))
}

/// True for integer (not bool, not pointer) values.
fn is_int(n: &Arc<UOp>) -> bool {
    n.dtype().is_int()
}

/// True for integer or bool values.
fn is_int_or_bool(n: &Arc<UOp>) -> bool {
    n.dtype().is_int() || n.dtype().is_bool()
}

/// True if every value of `r` is representable in `dtype`.
fn fits(dtype: DType, r: (i128, i128)) -> bool {
    let t = dtype.scalar_type();
    r.0 >= t.min_int() && r.1 <= t.max_int()
}

/// The all-ones value of an integer or bool type (`-1`, `MAX` or `true`).
fn all_ones(dtype: DType) -> i128 {
    let t = dtype.scalar_type();
    if t.is_signed_int() {
        -1
    } else {
        t.max_int()
    }
}

/// The type an ALU node computes in (see [`eval::exec_alu`]).
fn compute_dtype(n: &Arc<UOp>) -> DType {
    match n.op() {
        Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe | Op::IsNan => n.s(0).dtype(),
        _ => n.dtype(),
    }
}
