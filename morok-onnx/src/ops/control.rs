//! Control flow: `If` and `Loop`, whose bodies are prepared subgraphs run
//! with the enclosing values in scope.
//!
//! The condition and trip count are read on the host, so a body runs once
//! per iteration as it is built; loop-carried values are realized after
//! each iteration so that the lazy graph stays the size of one body.

use super::{host_scalar, invalid, unsupported, OpCtx, OpFn, OpResult};
use crate::exec::run_graph;
use morok::{DType, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[("If", if_), ("Loop", loop_)];

/// The most iterations a `Loop` may run.
const MAX_ITERATIONS: i64 = 100_000;

fn if_(ctx: &OpCtx<'_>) -> OpResult {
    let cond = host_scalar(ctx.input(0)?)? != 0.0;
    let branch = ctx.graph(if cond { "then_branch" } else { "else_branch" })?;
    Ok(run_graph(branch, ctx.values.clone(), ctx.opset)?)
}

fn loop_(ctx: &OpCtx<'_>) -> OpResult {
    let body = ctx.graph("body")?;
    let trips = ctx.opt(0).map(host_scalar).transpose()?.map(|v| v as i64);
    let mut cond = match ctx.opt(1) {
        Some(c) => host_scalar(c)? != 0.0,
        None => true,
    };
    let mut carried: Vec<Tensor> = ctx.inputs.iter().skip(2).flatten().cloned().collect();
    let n_carried = carried.len();
    if body.all_inputs.len() != n_carried + 2 {
        invalid!(
            "the body takes {} inputs for {n_carried} loop-carried values",
            body.all_inputs.len()
        );
    }
    let n_scan = body.outputs.len().saturating_sub(1 + n_carried);
    let mut scans: Vec<Vec<Tensor>> = vec![Vec::new(); n_scan];
    let mut i = 0i64;
    while cond && trips.is_none_or(|m| i < m) {
        if i >= MAX_ITERATIONS {
            unsupported!("a loop of more than {MAX_ITERATIONS} iterations");
        }
        let mut values = ctx.values.clone();
        values.insert(body.all_inputs[0].name.clone(), Tensor::full(&[], i));
        values.insert(body.all_inputs[1].name.clone(), Tensor::full(&[], cond));
        for (info, t) in body.all_inputs[2..].iter().zip(&carried) {
            values.insert(info.name.clone(), t.clone());
        }
        let outs = run_graph(body, values, ctx.opset)?;
        cond = host_scalar(&outs[0].cast(DType::BOOL)?)? != 0.0;
        carried = outs[1..1 + n_carried]
            .iter()
            .map(|t| t.realize())
            .collect::<morok::Result<_>>()?;
        for (k, t) in outs[1 + n_carried..].iter().enumerate() {
            scans[k].push(t.realize()?);
        }
        i += 1;
    }
    let mut outputs = carried;
    for s in scans {
        if s.is_empty() {
            unsupported!("a scan output of a loop that ran no iteration");
        }
        let refs: Vec<&Tensor> = s.iter().collect();
        outputs.push(Tensor::stack(&refs, 0)?);
    }
    Ok(outputs)
}
