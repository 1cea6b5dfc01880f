//! Constant folding: an ALU op whose operands are all constants becomes
//! the constant [`exec_alu`] computes (never folded when the C result
//! would be undefined, see [`eval`](super::eval)). One rule per op;
//! `Threefry` is left to the device.

use super::compute_dtype;
use super::eval::exec_alu;
use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::uop::{ConstValue, UOp};
use smallvec::SmallVec;
use std::sync::Arc;

/// Constant folding, one rule per ALU op: `op(c1, ..., cn) → c`.
pub fn fold() -> PatternMatcher {
    patterns! {
        @name "fold";
        for op in unary [Neg, Not, Abs, Sqrt, Rsqrt, Recip, Exp, Exp2, Log, Log2, Sin, Cos,
                         Tan, Tanh, Erf, Floor, Ceil, Round, Trunc, IsNan] {
            n @ op(@const) => fold_node(n),
        }
        for op in binary [Add, Sub, Mul, Idiv, Fdiv, Mod, Max, Min, Pow, CmpLt, CmpLe, CmpEq,
                          CmpNe, And, Or, Xor, Shl, Shr] {
            n @ op(@const, @const) => fold_node(n),
        }
        for op in ternary [Where, MulAcc] {
            n @ op(@const, @const, @const) => fold_node(n),
        }
    }
}

/// Folds an ALU node whose operands are all CONSTs (a vector CONST is one
/// value broadcast to every lane, so the scalar result broadcasts too).
fn fold_node(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let args: SmallVec<[ConstValue; 3]> = n
        .src()
        .iter()
        .map(|s| s.const_value())
        .collect::<Option<_>>()?;
    let v = exec_alu(n.op(), compute_dtype(n), &args)?;
    Some(UOp::const_(n.dtype(), v))
}
