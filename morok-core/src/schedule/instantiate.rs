//! A kernel AST with variables (`DEFINE_VAR`) instantiated at values, in
//! the form the scheduler gives the same kernel scheduled at those sizes.
//!
//! The runtime uses it to prove that a kernel generalized over named dims
//! computes what the concrete kernel for some dim values computes: when
//! [`instantiate`] of the generic kernel is the concrete kernel's node,
//! the two are equal, because every step here preserves meaning: a
//! variable becomes its value, a loop of one iteration becomes its only
//! index 0 (and leaves the `END`/`REDUCE` lists), the scheduler's
//! simplification rules (each verified by evaluation) fold the arithmetic,
//! and the ranges are renumbered as kernelize numbers them.

use super::kernelize::renumber_ranges;
use super::simplify_rules;
use crate::rewrite::{graph_rewrite, RewriteError};
use crate::uop::{Arg, Op, Srcs, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// `ast` with each `DEFINE_VAR` named in `values` replaced by its value,
/// single-iteration ranges removed, simplified and renumbered.
pub fn instantiate(
    ast: &Arc<UOp>,
    values: &HashMap<String, i64>,
) -> Result<Arc<UOp>, RewriteError> {
    // Plain substitutions by node identity (`UOp::substitute`): a variable
    // by its value, then a range whose end became 1 by the index 0.
    let mut vars: HashMap<u64, Arc<UOp>> = HashMap::new();
    for n in ast.toposort() {
        if let (Op::DefineVar, Arg::Var { name, .. }) = (n.op(), n.arg()) {
            if let Some(&v) = values.get(name) {
                vars.insert(n.id(), UOp::index(v));
            }
        }
    }
    let bound = graph_rewrite(&simplify_rules(), &ast.substitute(&vars), &mut ())?;
    let units: HashMap<u64, Arc<UOp>> = bound
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Range && n.s(0).const_int() == Some(1))
        .map(|n| (n.id(), UOp::index(0)))
        .collect();
    let trimmed = drop_unit_ranges(&bound.substitute(&units));
    let simple = graph_rewrite(&simplify_rules(), &trimmed, &mut ())?;
    Ok(renumber_ranges(&simple))
}

/// Removes the non-RANGE operands (the former single-iteration ranges)
/// from every `END` and `REDUCE`: an `END` left without ranges is its
/// store, a `REDUCE` without ranges its value (one iteration). A walk in
/// topological order with rebuilt operands, as `UOp::substitute` does.
fn drop_unit_ranges(ast: &Arc<UOp>) -> Arc<UOp> {
    let mut done: HashMap<u64, Arc<UOp>> = HashMap::new();
    for n in ast.toposort() {
        let src: Srcs = n.src().iter().map(|s| done[&s.id()].clone()).collect();
        let new = if matches!(n.op(), Op::End | Op::Reduce) {
            let kept: Srcs = src
                .iter()
                .enumerate()
                .filter(|(i, s)| *i == 0 || s.op() == Op::Range)
                .map(|(_, s)| s.clone())
                .collect();
            if kept.len() == 1 {
                kept[0].clone()
            } else {
                n.with_sources(kept)
            }
        } else {
            n.with_sources(src)
        };
        done.insert(n.id(), new);
    }
    done[&ast.id()].clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;
    use crate::DType;

    #[test]
    fn a_loop_of_one_iteration_disappears() {
        // out[b * 10 + j] = in[b * 10 + j] over b < B, j < 10; at B = 1 it is
        // out[j] = in[j] over j < 10, numbered from 0.
        let var = UOp::new(
            Op::DefineVar,
            DType::INDEX,
            Srcs::new(),
            Arg::Var {
                name: "B".into(),
                min: 1,
                max: 100,
            },
        );
        let kernel = |ranges: &[Arc<UOp>], idx: &Arc<UOp>| {
            let v = UOp::define_global(1, DType::F32)
                .index_into(idx, None)
                .load();
            let st = UOp::define_global(0, DType::F32)
                .index_into(idx, None)
                .store(&v);
            UOp::sink(vec![st.end(ranges)])
        };
        let (b, j) = (
            UOp::range(&var, 0, AxisType::Loop),
            UOp::range(&UOp::index(10), 1, AxisType::Loop),
        );
        let generic = kernel(&[b.clone(), j.clone()], &b.mul_const(10).add(&j));
        let j0 = UOp::range(&UOp::index(10), 0, AxisType::Loop);
        let one = kernel(std::slice::from_ref(&j0), &j0);
        let values = HashMap::from([("B".to_string(), 1)]);
        assert!(Arc::ptr_eq(&instantiate(&generic, &values).unwrap(), &one));
        let b7 = UOp::range(&UOp::index(7), 0, AxisType::Loop);
        let seven = kernel(&[b7.clone(), j.clone()], &b7.mul_const(10).add(&j));
        let values = HashMap::from([("B".to_string(), 7)]);
        assert!(Arc::ptr_eq(
            &instantiate(&generic, &values).unwrap(),
            &seven
        ));
    }
}
