//! The clauses of a gate: the one walk over a boolean gate's conjunction.
//!
//! Gated accesses carry a condition built from `AND`s of comparisons,
//! possibly negated (`NOT`, or `CMPEQ(clause, false)`). The buffer-access
//! analysis (`lower::bounds`) and the gated-index simplifier
//! (`schedule::rangeify::gated_index`) both read a gate as the list of
//! its comparison conjuncts; [`clauses`] is that walk, written once.

use crate::uop::{Op, UOp};
use std::sync::Arc;

/// One conjunct of a gate: `lhs < rhs` (`strict`) or `lhs <= rhs`, or
/// its negation.
#[derive(Clone, Debug)]
pub struct Clause {
    /// The left operand.
    pub lhs: Arc<UOp>,
    /// The right operand.
    pub rhs: Arc<UOp>,
    /// `<` rather than `<=`.
    pub strict: bool,
    /// The clause holds when the comparison is false.
    pub negated: bool,
}

/// The comparison conjuncts of `gate`, and whether every conjunct is one
/// (then the gate is exactly their conjunction; otherwise it implies them,
/// and using only them loses precision but stays sound). A negated `AND`
/// is a disjunction, which is not split: it counts as another conjunct.
/// Iterative.
pub fn clauses(gate: &Arc<UOp>) -> (Vec<Clause>, bool) {
    let mut out = Vec::new();
    let mut only_comparisons = true;
    let mut todo = vec![(gate.clone(), false)];
    while let Some((g, negated)) = todo.pop() {
        match g.op() {
            Op::And if !negated => {
                todo.push((g.s(1).clone(), false));
                todo.push((g.s(0).clone(), false));
            }
            Op::Not => todo.push((g.s(0).clone(), !negated)),
            Op::CmpEq if g.s(0).dtype().is_bool() && g.s(1).const_int() == Some(0) => {
                todo.push((g.s(0).clone(), !negated))
            }
            Op::CmpLt | Op::CmpLe => out.push(Clause {
                lhs: g.s(0).clone(),
                rhs: g.s(1).clone(),
                strict: g.op() == Op::CmpLt,
                negated,
            }),
            _ => only_comparisons = false,
        }
    }
    (out, only_comparisons)
}

impl Clause {
    /// The interval `lhs − rhs` lies in where the clause holds (over the
    /// integers): `a < b ⇔ a − b ≤ −1`, `a ≤ b ⇔ a − b ≤ 0`, negations
    /// flip. The open end is `i128::MIN` or `i128::MAX`.
    pub fn difference(&self) -> (i128, i128) {
        match (self.strict, self.negated) {
            (true, false) => (i128::MIN, -1),
            (false, false) => (i128::MIN, 0),
            (true, true) => (0, i128::MAX),
            (false, true) => (1, i128::MAX),
        }
    }

    /// For a clause comparing an integer node that is not a constant
    /// with an integer constant, the node and the interval the clause
    /// confines it to (one end open: `i128::MIN` or `i128::MAX`).
    pub fn bound(&self) -> Option<(&Arc<UOp>, i128, i128)> {
        let (lo, hi) = self.difference();
        let int = |n: &UOp| n.dtype().is_int() && !n.dtype().is_vector() && n.const_int().is_none();
        match (self.rhs.const_int(), self.lhs.const_int()) {
            // x − c ∈ [lo, hi] ⇔ x ∈ [lo + c, hi + c].
            (Some(c), _) if int(&self.lhs) => {
                Some((&self.lhs, lo.saturating_add(c), hi.saturating_add(c)))
            }
            // c − x ∈ [lo, hi] ⇔ x ∈ [c − hi, c − lo].
            (_, Some(c)) if int(&self.rhs) => {
                Some((&self.rhs, c.saturating_sub(hi), c.saturating_sub(lo)))
            }
            _ => None,
        }
    }

    /// [`Clause::bound`] where the node is a `RANGE`.
    pub fn range_bound(&self) -> Option<(&Arc<UOp>, i128, i128)> {
        self.bound().filter(|(r, _, _)| r.op() == Op::Range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;

    #[test]
    fn clauses_of_a_box_and_of_negations() {
        let r = UOp::range(&UOp::index(10), 0, AxisType::Loop);
        let below = r.bin(Op::CmpLt, &UOp::index(5));
        let above = UOp::index(1).bin(Op::CmpLe, &r);
        let (cs, only) = clauses(&below.bin(Op::And, &above));
        assert!(only);
        let bounds: Vec<(i128, i128)> = cs
            .iter()
            .map(|c| {
                let (_, lo, hi) = c.range_bound().unwrap();
                (lo.max(0), hi.min(9))
            })
            .collect();
        assert_eq!(bounds, [(0, 4), (1, 9)]);
        let not_below = below.bin(
            Op::CmpEq,
            &UOp::const_(crate::DType::BOOL, crate::ConstValue::Bool(false)),
        );
        let (cs, _) = clauses(&not_below);
        let (_, lo, _) = cs[0].range_bound().unwrap();
        assert_eq!(lo, 5);
        // A negated conjunction is a disjunction: not split.
        let (cs, only) = clauses(&below.bin(Op::And, &above).un(Op::Not));
        assert!(cs.is_empty() && !only);
    }
}
