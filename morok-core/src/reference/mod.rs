//! The reference evaluator: the oracle every compiled kernel is checked
//! against.
//!
//! [`evaluate`] walks a tensor-level graph (see `docs/ARCHITECTURE.md`,
//! "Levels of the graph") and computes every node as a dense row-major
//! array, with no rewriting and no code generation. Floats are computed in
//! f64 and rounded to the node's dtype after each op; integers and bools
//! are computed exactly in i128 and wrapped to the node's width, so the
//! integer semantics of the IR (truncating `Idiv`, `Mod` with the sign of
//! the dividend, wrap-around) are reproduced bit for bit. The result is
//! returned as f64 values.
//!
//! Integer division or remainder by zero is undefined in C; the evaluator
//! defines both as 0.
//!
//! Every node that computes elements is held in memory, so a graph with
//! such a node of more than [`MAX_ELEMENTS`] elements is refused with an
//! error. Movement ops are views (index maps), evaluated lazily: the
//! windows of a convolution may expand to many more elements than that.

mod alu;
mod movement;
mod values;

use values::{vals_from_f64, wrap, Arr, Vals};
pub use values::{EvalError, RefArray, MAX_ELEMENTS};

use crate::dtype::{DType, ScalarType};
use crate::shape::numel;
use crate::uop::op::round_to_float;
use crate::uop::shape_of;
use crate::uop::{Arg, ConstValue, Op, OpGroup, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// An evaluated node: an array, or a movement op's view of one.
enum Value {
    Dense(Arc<Arr>),
    View(movement::View),
}

/// Evaluates the tensor-level graph rooted at `root`. `buffers` returns the
/// elements of a BUFFER by id (as f64, converted to the buffer's dtype).
///
/// Movement ops are not materialized (they are views, see `movement.rs`), so only the
/// nodes that compute elements count against [`MAX_ELEMENTS`].
pub fn evaluate(
    root: &Arc<UOp>,
    buffers: &dyn Fn(u64) -> Option<Vec<f64>>,
) -> Result<RefArray, EvalError> {
    let nodes = root.toposort();
    for node in &nodes {
        if node.op().group() == OpGroup::Movement {
            continue;
        }
        if let Ok(Some(shape)) = shape_of(node) {
            if numel(&shape) > MAX_ELEMENTS {
                return Err(EvalError::new(
                    node,
                    format!(
                        "shape {:?} has more than {MAX_ELEMENTS} elements",
                        shape.as_slice()
                    ),
                ));
            }
        }
    }
    let mut done: HashMap<u64, Value> = HashMap::new();
    for node in nodes {
        let view = || match node.src().first().and_then(|s| done.get(&s.id())) {
            Some(Value::Dense(a)) => Ok(movement::View::of(a.clone())),
            Some(Value::View(v)) => Ok(v.clone()),
            None => Err(EvalError::new(&node, "an operand was not evaluated")),
        };
        let value = if node.op().group() == OpGroup::Movement {
            Value::View(movement::movement(&node, &view()?, node.arg())?)
        } else if let Arg::ReduceAxis(op, axes) = node.arg() {
            scalar_of(&node, node.dtype())?;
            Value::Dense(Arc::new(movement::reduce(&node, &view()?, *op, axes)?))
        } else {
            let mut srcs: Vec<Arc<Arr>> = Vec::with_capacity(node.src().len());
            for s in node.src() {
                srcs.push(dense(&mut done, s)?);
            }
            let srcs: Vec<&Arr> = srcs.iter().map(|a| a.as_ref()).collect();
            Value::Dense(Arc::new(eval_node(&node, &srcs, buffers)?))
        };
        done.insert(node.id(), value);
    }
    let out = dense(&mut done, root)?;
    Ok(RefArray {
        data: out.to_f64(),
        shape: out.shape.clone(),
        dtype: out.dtype,
    })
}

/// The elements of the evaluated node `n`, materializing (once) a view.
fn dense(done: &mut HashMap<u64, Value>, n: &Arc<UOp>) -> Result<Arc<Arr>, EvalError> {
    let arr = match done.get(&n.id()) {
        Some(Value::Dense(a)) => return Ok(a.clone()),
        Some(Value::View(v)) => Arc::new(v.materialize(n)?),
        None => return Err(EvalError::new(n, "an operand was not evaluated")),
    };
    done.insert(n.id(), Value::Dense(arr.clone()));
    Ok(arr)
}

/// The scalar type of a value dtype (vectors and pointers are not tensor
/// level).
fn scalar_of(node: &UOp, dtype: DType) -> Result<ScalarType, EvalError> {
    if dtype.is_vector() || dtype.is_ptr() || matches!(dtype.scalar_type(), ScalarType::Void) {
        return Err(EvalError::new(
            node,
            format!("dtype {dtype} is not a tensor element type"),
        ));
    }
    Ok(dtype.scalar_type())
}

fn operand<'a>(node: &UOp, srcs: &[&'a Arr], i: usize) -> Result<&'a Arr, EvalError> {
    srcs.get(i)
        .copied()
        .ok_or_else(|| EvalError::new(node, format!("operand {i} is missing")))
}

fn eval_node(
    node: &UOp,
    srcs: &[&Arr],
    buffers: &dyn Fn(u64) -> Option<Vec<f64>>,
) -> Result<Arr, EvalError> {
    let dtype = scalar_of(node, node.dtype())?;
    match (node.op(), node.arg()) {
        (Op::Const, Arg::Const(c)) => Ok(Arr {
            shape: Vec::new(),
            dtype,
            vals: const_vals(*c, dtype),
        }),
        (Op::Buffer, Arg::Buffer { id, size }) => {
            let data = buffers(*id)
                .ok_or_else(|| EvalError::new(node, format!("buffer {id} has no data")))?;
            if data.len() != *size {
                return Err(EvalError::new(
                    node,
                    format!("buffer {id} holds {} elements, not {size}", data.len()),
                ));
            }
            Ok(Arr {
                shape: vec![*size],
                dtype,
                vals: vals_from_f64(dtype, data),
            })
        }
        (Op::Contiguous | Op::Detach | Op::Noop | Op::Copy, _) => {
            Ok(operand(node, srcs, 0)?.clone())
        }
        (Op::Cast, _) => Ok(alu::cast(operand(node, srcs, 0)?, dtype)),
        (Op::Bitcast, _) => alu::bitcast(node, operand(node, srcs, 0)?, dtype),
        (op, _)
            if matches!(
                op.group(),
                OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
            ) =>
        {
            alu::alu(node, srcs, dtype)
        }
        (op, _) => Err(EvalError::new(
            node,
            format!("{} is not a tensor-level operation", op.dump_name()),
        )),
    }
}

fn const_vals(c: ConstValue, t: ScalarType) -> Vals {
    let c = ConstValue::from_f64_or_int(c, t);
    match c {
        ConstValue::Float(f) => Vals::F(vec![round_to_float(f, t)]),
        other => Vals::I(vec![wrap(other.as_i128().unwrap_or(0), t)]),
    }
}

#[cfg(test)]
mod tests;
