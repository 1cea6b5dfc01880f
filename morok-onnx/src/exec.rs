//! Runs a prepared graph: binds inputs, walks the nodes in their dependency
//! order and builds each node's outputs from its inputs with the op's
//! function (lazy tensors: nothing is computed here except the small
//! values an op needs on the host, such as a `Reshape`'s target shape).

use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::ops::{lookup, OpCtx, OpError};
use morok::Tensor;
use std::collections::HashMap;

/// The values visible while a graph runs, by name.
pub(crate) type Values = HashMap<String, Tensor>;

/// Runs `graph` on `values` (its inputs and the enclosing scope's values)
/// and returns its outputs in declaration order.
pub(crate) fn run_graph(graph: &Graph, mut values: Values, opset: i64) -> Result<Vec<Tensor>> {
    for (name, t) in &graph.initializers {
        values.entry(name.clone()).or_insert_with(|| t.clone());
    }
    for node in &graph.nodes {
        let fail = |message: String| Error::Node {
            node: node.label.clone(),
            op: node.op.clone(),
            message,
        };
        // Graph::prepare checked the domain and that the op exists.
        let Some(op_fn) = lookup(&node.op) else {
            return Err(fail("no Morok implementation of this op".into()));
        };
        let mut inputs = Vec::with_capacity(node.proto.input.len());
        for name in &node.proto.input {
            if name.is_empty() {
                inputs.push(None);
            } else {
                let t = values
                    .get(name)
                    .ok_or_else(|| fail(format!("input {name:?} has no value")))?;
                inputs.push(Some(t.clone()));
            }
        }
        let ctx = OpCtx {
            node,
            inputs,
            opset,
            values: &values,
        };
        let outputs = op_fn(&ctx).map_err(|e| match e {
            OpError::Tensor(source) => Error::Op {
                node: node.label.clone(),
                op: node.op.clone(),
                source,
            },
            OpError::Unsupported(reason) => Error::Unsupported {
                node: node.label.clone(),
                op: node.op.clone(),
                reason,
            },
            OpError::Invalid(message) => fail(message),
            OpError::Nested(inner) => *inner,
        })?;
        for (i, name) in node.proto.output.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let t = outputs.get(i).ok_or_else(|| {
                fail(format!(
                    "output {i} ({name:?}) is not produced by Morok's {}",
                    node.op
                ))
            })?;
            if let Some(err) = t.error() {
                return Err(Error::Op {
                    node: node.label.clone(),
                    op: node.op.clone(),
                    source: Box::new(err.clone()),
                });
            }
            values.insert(name.clone(), t.clone());
        }
    }
    graph
        .outputs
        .iter()
        .map(|o| {
            values
                .get(&o.name)
                .cloned()
                .ok_or_else(|| Error::Malformed(format!("graph output {:?} has no value", o.name)))
        })
        .collect()
}
