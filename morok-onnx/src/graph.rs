//! A graph prepared to run: its nodes in dependency order, its initializers
//! decoded, its subgraphs (the `If`/`Loop`/`Scan` bodies) prepared the same
//! way, and every name a node reads checked to exist.
//!
//! The order is Kahn's algorithm over the producer / consumer relation,
//! so a cycle or an input that nothing produces is found at load time and
//! reported with the node that reads it.

use crate::data::{tensor_from_proto, DataDir};
use crate::error::{Error, Result};
use crate::info::ValueInfo;
use crate::proto::{attribute_proto::AttributeType, GraphProto, NodeProto};
use morok::Tensor;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// A node with its display label and prepared subgraphs.
pub(crate) struct Node {
    /// The node as stored in the file.
    pub proto: NodeProto,
    /// How errors name it: its `name`, or `#index` and its first output.
    pub label: String,
    /// Its op type.
    pub op: String,
    /// Prepared graph-valued attributes, by attribute name.
    pub subgraphs: HashMap<String, Arc<Graph>>,
}

/// A graph ready to run.
pub(crate) struct Graph {
    /// Nodes in an order where every producer comes before its consumers.
    pub nodes: Vec<Node>,
    /// Initializers by name.
    pub initializers: HashMap<String, Tensor>,
    /// The inputs a caller supplies (graph inputs that are not initializers).
    pub inputs: Vec<ValueInfo>,
    /// Every declared graph input, initializers included (for subgraph
    /// bodies, whose inputs are bound by position).
    pub all_inputs: Vec<ValueInfo>,
    /// The outputs.
    pub outputs: Vec<ValueInfo>,
}

impl Graph {
    /// Prepares `proto`, whose nodes may also read the names in `outer`
    /// (the enclosing graphs' values, for a subgraph).
    pub fn prepare(proto: &GraphProto, outer: &HashSet<String>, dir: DataDir<'_>) -> Result<Graph> {
        let mut initializers = HashMap::new();
        for init in &proto.initializer {
            let name = init.name.clone().unwrap_or_default();
            initializers.insert(name, tensor_from_proto(init, dir)?);
        }
        if !proto.sparse_initializer.is_empty() {
            return Err(Error::Unsupported {
                node: proto.name.clone().unwrap_or_default(),
                op: "Graph".into(),
                reason: "sparse initializers".into(),
            });
        }
        for (index, node) in proto.node.iter().enumerate() {
            let weight = node
                .input
                .get(1)
                .filter(|_| node.op_type.as_deref() == Some("Conv"));
            if let Some(w) = weight.and_then(|name| initializers.get_mut(name)) {
                *w = output_channels_innermost(w).map_err(|e| Error::Node {
                    node: morok_onnx_schema::node_label(node, index),
                    op: "Conv".into(),
                    message: format!("weight layout: {e}"),
                })?;
            }
        }
        let all_inputs: Vec<ValueInfo> = proto.input.iter().map(ValueInfo::from_proto).collect();
        let inputs = all_inputs
            .iter()
            .filter(|i| !initializers.contains_key(&i.name))
            .cloned()
            .collect();
        let outputs = proto.output.iter().map(ValueInfo::from_proto).collect();

        let mut known: HashSet<String> = outer.clone();
        known.extend(all_inputs.iter().map(|i| i.name.clone()));
        known.extend(initializers.keys().cloned());
        known.insert(String::new());
        let order = topological_order(&proto.node, &known)?;

        let mut visible = known.clone();
        for node in &proto.node {
            visible.extend(node.output.iter().cloned());
        }
        let mut nodes = Vec::with_capacity(order.len());
        for index in order {
            let node = &proto.node[index];
            let label = morok_onnx_schema::node_label(node, index);
            let op = node.op_type.clone().unwrap_or_default();
            check_supported(node, &label, &op)?;
            let mut subgraphs = HashMap::new();
            for attr in &node.attribute {
                let is_graph = attr.r#type == Some(AttributeType::Graph as i32);
                if let (true, Some(g)) = (is_graph, &attr.g) {
                    let sub = Graph::prepare(g, &visible, dir).map_err(|e| match e {
                        Error::Malformed(m) => Error::Node {
                            node: label.clone(),
                            op: op.clone(),
                            message: format!(
                                "subgraph {}: {m}",
                                attr.name.clone().unwrap_or_default()
                            ),
                        },
                        other => other,
                    })?;
                    subgraphs.insert(attr.name.clone().unwrap_or_default(), Arc::new(sub));
                }
            }
            nodes.push(Node {
                proto: node.clone(),
                label,
                op,
                subgraphs,
            });
        }
        for out in &proto.output {
            let name = out.name.clone().unwrap_or_default();
            if !visible.contains(&name) {
                return Err(Error::Malformed(format!(
                    "graph output {name:?} is produced by no node"
                )));
            }
        }
        Ok(Graph {
            nodes,
            initializers,
            inputs,
            all_inputs,
            outputs,
        })
    }
}

/// The node indices in dependency order (Kahn's algorithm), or an error
/// naming a node whose input nothing produces or that is part of a cycle.
fn topological_order(nodes: &[NodeProto], known: &HashSet<String>) -> Result<Vec<usize>> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        for out in &node.output {
            if out.is_empty() {
                continue;
            }
            if producer.insert(out, i).is_some() {
                return Err(Error::Node {
                    node: morok_onnx_schema::node_label(node, i),
                    op: node.op_type.clone().unwrap_or_default(),
                    message: format!("output {out:?} is also produced elsewhere"),
                });
            }
        }
    }
    let mut waiting = vec![0usize; nodes.len()];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        let mut reads: Vec<&str> = node.input.iter().map(String::as_str).collect();
        reads.extend(subgraph_reads(node));
        for name in reads {
            if let Some(&p) = producer.get(name) {
                waiting[i] += 1;
                consumers[p].push(i);
            } else if !known.contains(name) {
                return Err(Error::Node {
                    node: morok_onnx_schema::node_label(node, i),
                    op: node.op_type.clone().unwrap_or_default(),
                    message: format!(
                        "input {name:?} is not a graph input, initializer or node output"
                    ),
                });
            }
        }
    }
    let mut ready: VecDeque<usize> = (0..nodes.len()).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(i) = ready.pop_front() {
        order.push(i);
        for &c in &consumers[i] {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.push_back(c);
            }
        }
    }
    if let Some(stuck) = (0..nodes.len()).find(|&i| waiting[i] > 0) {
        return Err(Error::Node {
            node: morok_onnx_schema::node_label(&nodes[stuck], stuck),
            op: nodes[stuck].op_type.clone().unwrap_or_default(),
            message: "the graph has a cycle through this node".into(),
        });
    }
    Ok(order)
}

/// Names a node's subgraphs read from the enclosing scope (their nodes'
/// inputs that no enclosing subgraph level defines), walked with an
/// explicit stack for nested subgraphs.
fn subgraph_reads(node: &NodeProto) -> Vec<&str> {
    let mut reads = Vec::new();
    let mut stack: Vec<(&GraphProto, HashSet<&str>)> = node
        .attribute
        .iter()
        .filter_map(|a| a.g.as_ref())
        .map(|g| (g, HashSet::new()))
        .collect();
    while let Some((g, mut defined)) = stack.pop() {
        defined.extend(g.input.iter().filter_map(|i| i.name.as_deref()));
        defined.extend(g.initializer.iter().filter_map(|i| i.name.as_deref()));
        for n in &g.node {
            defined.extend(n.output.iter().map(String::as_str));
        }
        for n in &g.node {
            reads.extend(
                n.input
                    .iter()
                    .map(String::as_str)
                    .filter(|i| !defined.contains(i)),
            );
            for a in &n.attribute {
                if let Some(sub) = &a.g {
                    stack.push((sub, defined.clone()));
                }
            }
        }
    }
    reads
}

/// An error unless Morok implements `op` in the node's domain.
fn check_supported(node: &NodeProto, label: &str, op: &str) -> Result<()> {
    let domain = node.domain.as_deref().unwrap_or("");
    match morok_onnx_schema::unsupported_reason(domain, op) {
        None => Ok(()),
        Some(reason) => Err(Error::Unsupported {
            node: label.to_string(),
            op: op.to_string(),
            reason,
        }),
    }
}

/// A 2-D convolution's float32 weight `[O, I, kh, kw]`, the same values
/// as a view of a buffer laid out `[I, kh, kw, O]` (the output channels
/// innermost), which the optimizer vectorizes along the output channels
/// where a feature map's rows are too short for vectors (see
/// `morok_core::opt::heuristic`). Other weights are returned as they are.
/// Done once at load, on the host, as ONNX Runtime packs its weights.
fn output_channels_innermost(w: &Tensor) -> morok::Result<Tensor> {
    let &[o, i, kh, kw] = w.shape() else {
        return Ok(w.clone());
    };
    if w.dtype() != morok::DType::F32 || o < 2 {
        return Ok(w.clone());
    }
    let values = w.to_vec::<f32>()?;
    let inner = i * kh * kw;
    let mut moved = vec![0.0f32; values.len()];
    for (out, row) in values.chunks_exact(inner.max(1)).enumerate() {
        for (k, &v) in row.iter().enumerate() {
            moved[k * o + out] = v;
        }
    }
    Tensor::from_vec(moved, &[i, kh, kw, o])?.permute(&[3, 0, 1, 2])
}
