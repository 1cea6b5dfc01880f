//! NE-gated gather collapse: a reduction that picks one element by an
//! equality with its range becomes one gated read.
//!
//! Matches `REDUCE(where(c, y, 0), r…)` (ADD, or MAX over `bool` with a
//! `false` default) where one conjunct of `c` is an equality `a == b`
//! that holds for exactly one value of a range `r ∈ [0, n)`: `a` is `±r`
//! plus terms free of `r` (integer arithmetic and casts read as `index`
//! ones where they cannot wrap, see `range_compare::as_index`), `b` is
//! free of `r`. The form `where(a != b, 0, y)` is read the same way. Solving the
//! equality gives `r = e` with `e` free of `r`, and the reduction over `r`
//! becomes
//!
//! ```text
//! where(g, y[r := e], 0)   with   g = (0 ≤ e < n) ∧ (the other conjuncts)[r := e]
//! ```
//!
//! and `g` gates every read of `y[r := e]`, so an `e` outside the range
//! touches no memory. Correct because every other term of the sum is the
//! identity `0` (`false` for MAX): the sum equals the one selected term
//! when `e` is a valid iteration of `r`, else `0`. This is what
//! `gather`/`index_select` build (a one-hot comparison of the index with
//! `arange`, summed): an `O(n)` loop per output becomes one load.

use super::buffer_removal::inline;
use super::depends_on;
use super::index_simplify::{self as ix};
use super::range_compare::as_index;
use super::reduce_simplify::{collapse_one_range, conjuncts, split_off_range};
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{Arg, Op, ReduceOp, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The gather collapse rule set.
pub fn gather_rules() -> PatternMatcher {
    patterns! {
        @name "gather-collapse";
        n @ Reduce(..) => gather_collapse(n),
    }
}

/// Collapses the first range of `n` whose body selects one iteration.
fn gather_collapse(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let Arg::Reduce(op) = n.arg() else {
        return None;
    };
    let dt = n.dtype();
    let zero_is_identity = match op {
        ReduceOp::Add => !dt.is_bool(),
        ReduceOp::Max => dt.is_bool(),
        _ => false,
    };
    if !zero_is_identity {
        return None;
    }
    collapse_one_range(n, *op, pick_one)
}

/// `where(g, y[r := e], 0)` for a body `x` that selects the one iteration
/// `r = e` (see the module docs).
fn pick_one(x: &Arc<UOp>, r: &Arc<UOp>) -> Option<Arc<UOp>> {
    if x.op() != Op::Where {
        return None;
    }
    let (atoms, y) = if x.s(2).is_zero_const() {
        let mut atoms = Vec::new();
        conjuncts(x.s(0), &mut atoms);
        (atoms, x.s(1))
    } else if x.s(1).is_zero_const() {
        (vec![not_equal_as_equal(x.s(0))?], x.s(2))
    } else {
        return None;
    };
    let (pos, e) = atoms
        .iter()
        .enumerate()
        .find_map(|(i, a)| solve_equality(a, r).map(|e| (i, e)))?;
    let size = super::axis_size(r) as i64;
    let in_range = ix::and(
        Some(&ix::lt(&UOp::index(-1), &e)),
        &ix::lt(&e, &UOp::index(size)),
    );
    let map: HashMap<u64, Arc<UOp>> = HashMap::from([(r.id(), e.clone())]);
    let mut gate = in_range.clone();
    for (i, a) in atoms.iter().enumerate() {
        if i != pos {
            gate = ix::and(Some(&gate), &inline(a, &map, Some(&in_range)));
        }
    }
    let value = inline(y, &map, Some(&gate));
    Some(gate.where_(&value, &UOp::zero(x.dtype())))
}

/// `a != b` (or `not(a == b)`) as the equality `a == b`.
fn not_equal_as_equal(c: &Arc<UOp>) -> Option<Arc<UOp>> {
    match c.op() {
        Op::CmpNe => Some(c.s(0).bin(Op::CmpEq, c.s(1))),
        Op::Not if c.s(0).op() == Op::CmpEq => Some(c.s(0).clone()),
        _ => None,
    }
}

/// For an equality atom that holds for exactly one `r`, that `r` as an
/// `index` expression free of `r`.
fn solve_equality(atom: &Arc<UOp>, r: &Arc<UOp>) -> Option<Arc<UOp>> {
    if atom.op() != Op::CmpEq {
        return None;
    }
    let (a, b) = match (depends_on(atom.s(0), r), depends_on(atom.s(1), r)) {
        (true, false) => (atom.s(0), atom.s(1)),
        (false, true) => (atom.s(1), atom.s(0)),
        _ => return None,
    };
    let a = as_index(a, r)?;
    let b = as_index(b, r)?;
    let (coeff, rest) = split_off_range(&a, r)?;
    // ±r + rest = b  ⟺  r = ±(b − rest).
    let diff = ix::add(&b, &ix::mul_c(&rest, -1));
    match coeff {
        1 => Some(diff),
        -1 => Some(ix::mul_c(&diff, -1)),
        _ => None,
    }
}
