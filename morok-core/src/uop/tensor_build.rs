//! Builders of tensor-level nodes for passes that make new tensor graphs
//! (gradients, zero-size folding). Each takes the shapes it needs from
//! its caller, who knows them, and skips the no-op form (a reshape to the
//! same shape, an expand that adds nothing, an empty reduction), so a
//! pass never builds nodes that the scheduler would only remove again.

use super::{Arg, ConstValue, Op, ReduceOp, Shape, UOp};
use crate::dtype::DType;
use smallvec::smallvec;
use std::sync::Arc;

impl UOp {
    /// `value` of `dtype` broadcast to `shape`: a CONST, RESHAPEd to
    /// all-ones and EXPANDed.
    #[track_caller]
    pub fn broadcast_const(dtype: DType, value: ConstValue, shape: &[usize]) -> Arc<UOp> {
        let mut out = UOp::const_(dtype, value);
        if shape.is_empty() {
            return out;
        }
        let ones: Shape = smallvec![1; shape.len()];
        out = UOp::new(Op::Reshape, dtype, smallvec![out], Arg::Shape(ones.clone()));
        if shape != ones.as_slice() {
            out = UOp::new(Op::Expand, dtype, smallvec![out], Arg::Shape(shape.into()));
        }
        out
    }

    /// RESHAPE of `self` (of shape `from`) to `to`; a reshape of a
    /// reshape starts from the inner source.
    #[track_caller]
    pub fn reshaped(self: &Arc<Self>, from: &[usize], to: &[usize]) -> Arc<UOp> {
        if from == to {
            return self.clone();
        }
        let source = match self.op() {
            Op::Reshape => self.s(0).clone(),
            _ => self.clone(),
        };
        UOp::new(
            Op::Reshape,
            self.dtype(),
            smallvec![source],
            Arg::Shape(to.into()),
        )
    }

    /// EXPAND of `self` (of shape `from`, same rank) to `to`.
    #[track_caller]
    pub fn expanded(self: &Arc<Self>, from: &[usize], to: &[usize]) -> Arc<UOp> {
        if from == to {
            return self.clone();
        }
        UOp::new(
            Op::Expand,
            self.dtype(),
            smallvec![self.clone()],
            Arg::Shape(to.into()),
        )
    }

    /// REDUCE_AXIS `op` of `self` over `axes` (reduced axes kept as 1).
    #[track_caller]
    pub fn reduced(self: &Arc<Self>, op: ReduceOp, axes: &[usize]) -> Arc<UOp> {
        if axes.is_empty() {
            return self.clone();
        }
        UOp::new(
            Op::ReduceAxis,
            self.dtype(),
            smallvec![self.clone()],
            Arg::ReduceAxis(op, axes.into()),
        )
    }

    /// A movement node `op` (PERMUTE, FLIP: arg `Axes`; PAD, SHRINK: arg
    /// `Pairs`) of `self`.
    #[track_caller]
    pub fn moved(self: &Arc<Self>, op: Op, arg: Arg) -> Arc<UOp> {
        UOp::new(op, self.dtype(), smallvec![self.clone()], arg)
    }
}
