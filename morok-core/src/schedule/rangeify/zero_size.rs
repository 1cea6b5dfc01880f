//! Zero-size tensors (tensor level), before every other pass.
//!
//! A node without elements has no values to compute: it becomes a
//! constant 0 of its shape, so no kernel loads from an empty buffer or
//! loops over an empty axis to produce it. A `REDUCE_AXIS` whose input has
//! no elements but whose output has some is the reduction's identity
//! broadcast to its shape (the sum of nothing is 0, the maximum of nothing
//! the dtype's minimum, ...). Empty input buffers become constants too
//! (nothing can be read from them); constant broadcasts stay as they are.
//!
//! Without this pass the index simplifier, which folds a range of end 0
//! to the constant 0 (its bounds are `[0, 0]`), loses the emptiness of
//! the loop: a reduction over an empty axis would read elements of the
//! other axes, and a load would be hoisted out of the loop that never
//! runs.

use crate::patterns;
use crate::rewrite::PatternMatcher;
use crate::shape::numel;
use crate::uop::shape_of;
use crate::uop::{Arg, ConstValue, Op, Shape, UOp};
use std::sync::Arc;

/// The zero-size rule set.
pub fn zero_size_rules() -> PatternMatcher {
    patterns! {
        @name "zero-size";
        n @ ReduceAxis(_) => empty_reduce(n),
        n @ _ => zero_size(n),
    }
}

/// The tensor shape of `n`, if it is a tensor-level node.
fn shape(n: &Arc<UOp>) -> Option<Shape> {
    shape_of(n).ok().flatten()
}

/// `REDUCE_AXIS` over no elements → its identity, broadcast.
fn empty_reduce(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let Arg::ReduceAxis(op, _) = n.arg() else {
        return None;
    };
    let out = shape(n)?;
    if numel(&shape(n.s(0))?) != 0 || numel(&out) == 0 {
        return None;
    }
    let value = op.identity(n.dtype().scalar_type());
    Some(UOp::broadcast_const(n.dtype(), value, &out))
}

/// A node without elements → the constant 0, broadcast.
fn zero_size(n: &Arc<UOp>) -> Option<Arc<UOp>> {
    let mut base = n;
    while matches!(base.op(), Op::Reshape | Op::Expand) {
        base = base.s(0);
    }
    if base.op() == Op::Const {
        return None;
    }
    let out = shape(n)?;
    if numel(&out) != 0 {
        return None;
    }
    Some(UOp::broadcast_const(
        n.dtype(),
        ConstValue::zero(n.dtype().scalar_type()),
        &out,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::rewrite::graph_rewrite_bottom_up;
    use crate::uop::{ReduceOp, Srcs};
    use smallvec::smallvec;

    fn buffer(size: usize) -> Arc<UOp> {
        UOp::new(
            Op::Buffer,
            DType::F32,
            Srcs::new(),
            Arg::Buffer {
                id: 9_100_001 + size as u64,
                size,
            },
        )
    }

    fn reshape(x: &Arc<UOp>, shape: &[usize]) -> Arc<UOp> {
        UOp::new(
            Op::Reshape,
            x.dtype(),
            smallvec![x.clone()],
            Arg::Shape(shape.into()),
        )
    }

    fn rewrite(x: &Arc<UOp>) -> Arc<UOp> {
        graph_rewrite_bottom_up(&zero_size_rules(), x, &mut ()).unwrap()
    }

    #[test]
    fn empty_nodes_become_constants_and_empty_reductions_identities() {
        let empty = reshape(&buffer(0), &[0, 2]);
        // Nothing can be read from an empty input.
        assert!(rewrite(&empty)
            .toposort()
            .iter()
            .all(|n| n.op() != Op::Buffer));
        let exp = UOp::alu(Op::Exp2, smallvec![empty]);
        let zero = rewrite(&exp);
        assert_eq!(zero.op(), Op::Expand);
        assert_eq!(shape(&zero).unwrap().as_slice(), &[0, 2]);
        assert!(zero.toposort().iter().all(|n| n.op() != Op::Buffer));
        let max = UOp::new(
            Op::ReduceAxis,
            DType::F32,
            smallvec![exp],
            Arg::ReduceAxis(ReduceOp::Max, smallvec![0]),
        );
        let id = rewrite(&max);
        assert_eq!(shape(&id).unwrap().as_slice(), &[1, 2]);
        let c = id.toposort()[0].clone();
        assert_eq!(
            c.const_value(),
            Some(ConstValue::min_of(crate::ScalarType::F32))
        );
        // A reduction with elements is not touched.
        let full = reshape(&buffer(6), &[3, 2]);
        let sum = UOp::new(
            Op::ReduceAxis,
            DType::F32,
            smallvec![full],
            Arg::ReduceAxis(ReduceOp::Add, smallvec![0]),
        );
        assert!(Arc::ptr_eq(&rewrite(&sum), &sum));
    }
}
