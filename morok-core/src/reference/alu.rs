//! Elementwise ops of the reference evaluator: ALU ops, CAST and BITCAST.

use super::values::{int_from_f64, wrap, Arr, EvalError, Vals};
use crate::dtype::{DType, ScalarType};
use crate::symbolic::eval::{bits_of, cast_with, exec_alu_with, value_of_bits, Undefined};
use crate::uop::op::round_to_float;
use crate::uop::{ConstValue, Op, UOp};
use smallvec::SmallVec;

/// Evaluates a unary, binary or ternary ALU node whose result type is `out`.
pub(super) fn alu(node: &UOp, srcs: &[&Arr], out: ScalarType) -> Result<Arr, EvalError> {
    let arity = match node.op() {
        Op::Where | Op::MulAcc => 3,
        op if op.group() == crate::uop::OpGroup::Binary => 2,
        _ => 1,
    };
    if srcs.len() != arity {
        return Err(EvalError::new(
            node,
            format!("expects {arity} operands, has {}", srcs.len()),
        ));
    }
    if srcs.iter().any(|s| s.shape != srcs[0].shape) {
        let shapes: Vec<&Vec<usize>> = srcs.iter().map(|s| &s.shape).collect();
        return Err(EvalError::new(
            node,
            format!("operand shapes differ: {shapes:?}"),
        ));
    }
    let shape = srcs[0].shape.clone();
    let vals = elementwise(node, srcs, out)?;
    Ok(Arr {
        shape,
        dtype: out,
        vals,
    })
}

/// Evaluates the op element by element with the one ALU semantics,
/// [`exec_alu_with`] in its oracle mode ([`Undefined::Define`]): floats in
/// f64 rounded to `out`, integers exact and wrapped to `out`.
fn elementwise(node: &UOp, srcs: &[&Arr], out: ScalarType) -> Result<Vals, EvalError> {
    let op = node.op();
    // The type the op computes in: the branches' for WHERE, else the
    // first operand's (see `exec_alu`).
    let operands = if op == Op::Where { &srcs[1..] } else { srcs };
    let compute = operands[0].dtype;
    if operands
        .iter()
        .any(|s| s.dtype.is_float() != compute.is_float())
    {
        let dtypes: Vec<String> = srcs.iter().map(|s| s.dtype.to_string()).collect();
        return Err(EvalError::new(
            node,
            format!(
                "operands of dtypes {} mix floats and integers",
                dtypes.join(", ")
            ),
        ));
    }
    let value = |a: &Arr, i: usize| match &a.vals {
        Vals::F(v) => ConstValue::Float(v[i]),
        Vals::I(v) => ConstValue::from_i128(v[i], a.dtype),
    };
    let len = srcs[0].len();
    let mut results = Vec::with_capacity(len);
    for i in 0..len {
        let args: SmallVec<[ConstValue; 3]> = srcs.iter().map(|s| value(s, i)).collect();
        let r = exec_alu_with(op, DType::from(compute), &args, Undefined::Define)
            .ok_or_else(|| EvalError::new(node, format!("not defined for dtype {compute}")))?;
        results.push(r);
    }
    Ok(if out.is_float() {
        Vals::F(
            results
                .iter()
                .map(|r| round_to_float(r.as_f64(), out))
                .collect(),
        )
    } else {
        Vals::I(
            results
                .iter()
                .map(|r| wrap(r.as_i128().unwrap_or(0), out))
                .collect(),
        )
    })
}

/// Value conversion to `t`: integers wrap to a narrower type (C); floats
/// to integers truncate and saturate, NaN to 0 (Rust `as`).
pub(super) fn cast(x: &Arr, t: ScalarType) -> Arr {
    // The one cast semantics (`eval::cast_with`, saturating float → int).
    let to = DType::scalar(t);
    let one = |v: ConstValue| cast_with(v, to, Undefined::Define).unwrap_or(ConstValue::Int(0));
    let vals = match &x.vals {
        Vals::F(v) if t.is_float() => Vals::F(v.iter().map(|&a| round_to_float(a, t)).collect()),
        Vals::F(v) => Vals::I(v.iter().map(|&a| int_from_f64(a, t)).collect()),
        Vals::I(v) if t.is_float() => Vals::F(
            v.iter()
                .map(|&a| one(ConstValue::from_i128(a, x.dtype)).as_f64())
                .collect(),
        ),
        Vals::I(v) => Vals::I(v.iter().map(|&a| wrap(a, t)).collect()),
    };
    Arr {
        shape: x.shape.clone(),
        dtype: t,
        vals,
    }
}

/// Bit reinterpretation between types of equal size.
pub(super) fn bitcast(node: &UOp, x: &Arr, t: ScalarType) -> Result<Arr, EvalError> {
    if x.dtype.itemsize() != t.itemsize() || x.dtype.is_bool() != t.is_bool() {
        return Err(EvalError::new(
            node,
            format!("cannot reinterpret {} as {t}", x.dtype),
        ));
    }
    // The one bit layout (`eval::bits_of` / `eval::value_of_bits`).
    let moved = (0..x.len()).map(|i| {
        let v = match &x.vals {
            Vals::F(v) => ConstValue::Float(v[i]),
            Vals::I(v) => ConstValue::from_i128(v[i], x.dtype),
        };
        value_of_bits(bits_of(v, x.dtype).unwrap_or(0), t)
    });
    let vals = if t.is_float() {
        Vals::F(moved.map(|c| c.as_f64()).collect())
    } else {
        Vals::I(moved.map(|c| c.as_i128().unwrap_or(0)).collect())
    };
    Ok(Arr {
        shape: x.shape.clone(),
        dtype: t,
        vals,
    })
}
