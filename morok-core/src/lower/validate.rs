//! Checks that a graph is a kernel AST as the contract in
//! `docs/ARCHITECTURE.md` defines it, so that the later stages can rely on
//! its shape and bad input gives an error instead of wrong code.

use super::LowerError;
use crate::dtype::{AddrSpace, DType};
use crate::uop::{Arg, Op, OpGroup, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// Validates `ast` against the kernel AST contract:
///
/// - the root is a `SINK` of `STORE`s, each bare or wrapped in
///   `END(store, ranges...)`;
/// - stores and loads go through `INDEX(DEFINE_GLOBAL, idx[, gate])` with
///   an integer `idx` and a bool `gate`, and a stored value has the
///   buffer's element type;
/// - `RANGE`s have one integer end and a `Range` arg; `REDUCE`s have a
///   `Reduce` arg and only `RANGE`s after the value;
/// - each `DEFINE_GLOBAL` slot has one element type;
/// - ALU operands have matching types (comparisons excepted for the
///   result, `WHERE` for its bool condition);
/// - nothing else (tensor-level or already-lowered ops) appears.
pub fn validate(ast: &Arc<UOp>) -> Result<(), LowerError> {
    if ast.op() != Op::Sink {
        return Err(LowerError::malformed("the root must be a SINK", ast));
    }
    for root in ast.src() {
        let store = if root.op() == Op::End {
            for r in &root.src()[1..] {
                if r.op() != Op::Range {
                    return Err(LowerError::malformed("END closes a non-RANGE", root));
                }
            }
            root.s(0)
        } else {
            root
        };
        if store.op() != Op::Store {
            return Err(LowerError::malformed(
                "a SINK operand must be a STORE or END(STORE, ranges...)",
                root,
            ));
        }
    }
    let mut slots: HashMap<i64, DType> = HashMap::new();
    for n in ast.toposort() {
        check_node(&n, &mut slots)?;
    }
    Ok(())
}

fn is_int(d: DType) -> bool {
    d.is_int() && !d.is_vector()
}

fn check_node(n: &Arc<UOp>, slots: &mut HashMap<i64, DType>) -> Result<(), LowerError> {
    let bad = |what: &str| Err(LowerError::malformed(what, n));
    let src = n.src();
    if n.dtype().is_vector() {
        return bad("vector dtypes are not supported by lowering yet");
    }
    match n.op() {
        Op::Sink => {}
        Op::End => {
            if src.len() < 2 || src[0].op() != Op::Store {
                return bad("END must close a STORE over at least one RANGE");
            }
        }
        Op::Store => {
            if src.len() != 2 || src[0].op() != Op::Index {
                return bad("STORE needs (INDEX, value)");
            }
            if src[1].dtype() != src[0].dtype().pointee() {
                return bad("stored value's dtype differs from the buffer's element type");
            }
        }
        Op::Load => {
            if src.len() != 1 || src[0].op() != Op::Index {
                return bad("LOAD needs exactly one INDEX operand");
            }
            if n.dtype() != src[0].dtype().pointee() {
                return bad("LOAD's dtype differs from the buffer's element type");
            }
        }
        Op::Index => {
            if !(2..=3).contains(&src.len()) || src[0].op() != Op::DefineGlobal {
                return bad("INDEX needs (DEFINE_GLOBAL, idx[, gate])");
            }
            if !is_int(src[1].dtype()) {
                return bad("INDEX offset must be an integer");
            }
            if src.len() == 3 && src[2].dtype() != DType::BOOL {
                return bad("INDEX gate must be bool");
            }
        }
        Op::DefineGlobal => {
            let slot = match n.arg() {
                Arg::Int(s) if *s >= 0 => *s,
                _ => return bad("DEFINE_GLOBAL needs a non-negative Int slot"),
            };
            if n.dtype().addr_space() != Some(AddrSpace::Global) {
                return bad("DEFINE_GLOBAL must have a global pointer dtype");
            }
            let elem = n.dtype().pointee();
            if elem.scalar_type() == crate::dtype::ScalarType::Index
                || elem.scalar_type() == crate::dtype::ScalarType::Void
            {
                return bad("buffers cannot hold index or void elements");
            }
            if let Some(prev) = slots.insert(slot, elem) {
                if prev != elem {
                    return bad("slot is used with two different element types");
                }
            }
        }
        Op::DefineVar => {
            if !matches!(n.arg(), Arg::Var { .. }) || !is_int(n.dtype()) {
                return bad("DEFINE_VAR needs a Var arg and an integer dtype");
            }
        }
        Op::Range => {
            if src.len() != 1 || !is_int(src[0].dtype()) || n.axis_type().is_none() {
                return bad("RANGE needs one integer end and a Range arg");
            }
        }
        Op::Reduce => {
            if !matches!(n.arg(), Arg::Reduce(_)) || src.len() < 2 {
                return bad("REDUCE needs a Reduce arg, a value and at least one RANGE");
            }
            if src[1..].iter().any(|r| r.op() != Op::Range) {
                return bad("REDUCE operands after the value must be RANGEs");
            }
            if src[0].dtype() != n.dtype() {
                return bad("REDUCE dtype differs from its value's");
            }
        }
        Op::Const => {
            if !matches!(n.arg(), Arg::Const(_)) {
                return bad("CONST needs a Const arg");
            }
        }
        Op::Cast | Op::Bitcast => {
            if src.len() != 1 {
                return bad("CAST/BITCAST take one operand");
            }
            if n.op() == Op::Bitcast && src[0].dtype().itemsize() != n.dtype().itemsize() {
                return bad("BITCAST between types of different sizes");
            }
        }
        Op::Wmma => {
            let halves = [DType::F16, DType::BF16];
            let ok = matches!(n.arg(), Arg::Str(s) if s == "m16n8k16")
                && src.len() == 13
                && halves.contains(&src[0].dtype())
                && src[..12].iter().all(|s| s.dtype() == src[0].dtype())
                && src[12].dtype() == DType::INDEX
                && n.dtype() == DType::F32;
            if !ok {
                return bad("WMMA m16n8k16 takes 8 + 4 halves of one type and an index, gives f32");
            }
        }
        op => match op.group() {
            OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary => check_alu(n)?,
            _ => return bad("op not allowed in a kernel AST"),
        },
    }
    Ok(())
}

fn check_alu(n: &Arc<UOp>) -> Result<(), LowerError> {
    let bad = |what: &str| Err(LowerError::malformed(what, n));
    let src = n.src();
    let arity = match n.op().group() {
        OpGroup::Unary => 1,
        OpGroup::Binary => 2,
        _ => 3,
    };
    if src.len() != arity {
        return bad("wrong number of operands for the op");
    }
    match n.op() {
        Op::Where => {
            if src[0].dtype() != DType::BOOL {
                return bad("WHERE condition must be bool");
            }
            if src[1].dtype() != src[2].dtype() || n.dtype() != src[1].dtype() {
                return bad("WHERE branches must have the result's dtype");
            }
        }
        Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe | Op::IsNan => {
            if n.dtype() != DType::BOOL {
                return bad("comparisons produce bool");
            }
            if arity == 2 && src[0].dtype() != src[1].dtype() {
                return bad("comparison operands have different dtypes");
            }
        }
        Op::Threefry => {
            if n.dtype() != DType::U64 || src.iter().any(|s| s.dtype() != DType::U64) {
                return bad("THREEFRY works on u64 operands and result");
            }
        }
        _ => {
            if src.iter().any(|s| s.dtype() != n.dtype()) {
                return bad("ALU operands must have the result's dtype");
            }
            if n.dtype() == DType::VOID {
                return bad("ALU ops cannot be void");
            }
        }
    }
    Ok(())
}
