//! A reference interpreter for scalar and vector ALU expressions.
//!
//! [`evaluate`] computes the value of a graph of constants, ALU ops, casts
//! and vector ops, given values for its free leaves (`DEFINE_VAR`, `LOAD`,
//! `RANGE`, ... — any node can be given a value, which is then used as is).
//! Every operation goes through [`exec_alu`] / [`cast_const`], so the
//! interpreter has exactly the semantics constant folding has; an undefined
//! operation anywhere (division by zero, ...) makes the whole result
//! undefined (`None`), as it makes the C program undefined.
//!
//! The symbolic rule verification evaluates each expression before and
//! after a rewrite on every assignment of its variables and compares.

use super::eval::{bitcast_const, cast_const, exec_alu};
use crate::uop::{Arg, ConstValue, Op, OpGroup, UOp};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::Arc;

/// The lanes of a value (one lane for scalars).
pub type Lanes = SmallVec<[ConstValue; 4]>;

/// The value of `root` given values for its leaves (keyed by node id;
/// scalar leaves broadcast to every lane), or `None` if some operation on
/// the way is undefined or some leaf has no value.
#[cfg(test)]
pub fn evaluate(root: &Arc<UOp>, leaves: &HashMap<u64, ConstValue>) -> Option<Lanes> {
    Program::new(root).run(leaves)
}

/// A graph prepared for repeated evaluation (the topological order and
/// operand positions are computed once).
pub struct Program {
    order: Vec<Arc<UOp>>,
    operands: Vec<Vec<usize>>,
}

impl Program {
    /// Prepares `root` for evaluation.
    pub fn new(root: &Arc<UOp>) -> Program {
        let order = root.toposort();
        let pos: HashMap<u64, usize> = order.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
        let operands = order
            .iter()
            .map(|n| n.src().iter().map(|s| pos[&s.id()]).collect())
            .collect();
        Program { order, operands }
    }

    /// The nodes of the graph, operands first.
    pub fn nodes(&self) -> &[Arc<UOp>] {
        &self.order
    }

    /// Evaluates the graph (see [`evaluate`]).
    pub fn run(&self, leaves: &HashMap<u64, ConstValue>) -> Option<Lanes> {
        // Nodes below a leaf (a LOAD's address, say) need no value, so a node
        // without one only matters when something evaluates it.
        let mut vals: Vec<Option<Lanes>> = Vec::with_capacity(self.order.len());
        for (n, ops) in self.order.iter().zip(&self.operands) {
            let v = match leaves.get(&n.id()) {
                Some(v) => Some(SmallVec::from_elem(*v, n.dtype().count() as usize)),
                None => ops
                    .iter()
                    .map(|&i| vals[i].as_ref())
                    .collect::<Option<Vec<&Lanes>>>()
                    .and_then(|src| eval_node(n, &src)),
            };
            vals.push(v);
        }
        vals.pop().flatten()
    }
}

/// The value of a non-leaf node from its operands' values.
fn eval_node(n: &Arc<UOp>, src: &[&Lanes]) -> Option<Lanes> {
    let lanes = n.dtype().count() as usize;
    // Lane `i` of operand `k` (scalars broadcast).
    let lane = |k: usize, i: usize| -> ConstValue {
        let v = src[k];
        if v.len() == 1 {
            v[0]
        } else {
            v[i]
        }
    };
    match n.op() {
        Op::Const => Some(SmallVec::from_elem(n.const_value()?, lanes)),
        Op::VConst => match n.arg() {
            Arg::Consts(cs) => Some(cs.iter().copied().collect()),
            _ => None,
        },
        Op::Vectorize => Some(src.iter().map(|v| v[0]).collect()),
        Op::Gep => match n.arg() {
            Arg::Axes(ix) => ix.iter().map(|&i| src[0].get(i).copied()).collect(),
            _ => None,
        },
        Op::Cast => (0..lanes)
            .map(|i| cast_const(lane(0, i), n.dtype()))
            .collect(),
        Op::Bitcast => {
            let (from, to) = (n.s(0).dtype().scalar_type(), n.dtype().scalar_type());
            (0..lanes)
                .map(|i| bitcast_const(lane(0, i), from, to))
                .collect()
        }
        op if matches!(
            op.group(),
            OpGroup::Unary | OpGroup::Binary | OpGroup::Ternary
        ) =>
        {
            let dtype = match op {
                Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe | Op::IsNan => n.s(0).dtype(),
                _ => n.dtype(),
            };
            (0..lanes)
                .map(|i| {
                    let args: SmallVec<[ConstValue; 3]> =
                        (0..src.len()).map(|k| lane(k, i)).collect();
                    exec_alu(op, dtype, &args)
                })
                .collect()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::uop::Srcs;

    #[test]
    fn evaluates_with_leaf_values_and_propagates_undefined() {
        let x = UOp::new(
            Op::DefineVar,
            DType::INDEX,
            Srcs::new(),
            Arg::Var {
                name: "x".into(),
                min: -5,
                max: 5,
            },
        );
        let e = x.mul_const(3).add_const(1).bin(Op::Idiv, &x);
        let env = |v: i64| HashMap::from([(x.id(), ConstValue::Int(v))]);
        assert_eq!(evaluate(&e, &env(-2)).unwrap()[0], ConstValue::Int(2));
        assert_eq!(evaluate(&e, &env(0)), None);
        let v = UOp::new(
            Op::Vectorize,
            DType::INDEX.vec(2),
            Srcs::from_vec(vec![x.clone(), e.clone()]),
            Arg::None,
        );
        let g = UOp::new(
            Op::Gep,
            DType::INDEX,
            Srcs::from_vec(vec![v]),
            Arg::Axes(smallvec::smallvec![1]),
        );
        assert_eq!(evaluate(&g, &env(4)).unwrap()[0], ConstValue::Int(3));
        assert_eq!(evaluate(&g, &HashMap::new()), None);
    }
}
