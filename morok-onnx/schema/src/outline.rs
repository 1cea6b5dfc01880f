//! What a model declares without running it: its opset, its inputs and
//! outputs (element type and shape, symbolic dims kept as names), and the
//! first node whose op Morok does not implement.

use crate::proto::{tensor_shape_proto::dimension, type_proto, ModelProto, NodeProto, TypeProto};
use prost::Message;
use std::fmt;

/// One dim of a declared shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Fixed(usize),
    /// A symbolic size (`dim_param`), e.g. `"batch"`; every dim with the
    /// same name must have the same size in one run.
    Named(String),
    /// A size the model leaves open.
    Unknown,
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Named(s) => f.write_str(s),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

/// The declared shape of a tensor type, if it has one.
pub fn declared_dims(tp: &type_proto::Tensor) -> Option<Vec<Dim>> {
    tp.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match &d.value {
                Some(dimension::Value::DimValue(v)) if *v >= 0 => Dim::Fixed(*v as usize),
                Some(dimension::Value::DimParam(p)) if !p.is_empty() => Dim::Named(p.clone()),
                _ => Dim::Unknown,
            })
            .collect()
    })
}

/// A declared graph input or output, as far as the file says.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// Its name.
    pub name: String,
    /// Its ONNX element type code, when it is a plain tensor.
    pub elem_type: Option<i32>,
    /// Its declared shape, when it is a tensor with one.
    pub shape: Option<Vec<Dim>>,
}

impl Value {
    fn of(name: &Option<String>, tp: Option<&TypeProto>) -> Value {
        let tensor = match tp.and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(t)) => Some(t),
            _ => None,
        };
        Value {
            name: name.clone().unwrap_or_default(),
            elem_type: tensor.map(|t| t.elem_type.unwrap_or(0)),
            shape: tensor.and_then(declared_dims),
        }
    }
}

/// A node Morok cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The node's label (see [`node_label`]).
    pub node: String,
    /// Its op type.
    pub op: String,
    /// Why (a foreign domain, or no implementation).
    pub reason: String,
}

/// A model's outline.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    /// The default-domain opset it imports.
    pub opset: i64,
    /// The inputs a caller supplies (graph inputs that are not initializers).
    pub inputs: Vec<Value>,
    /// The graph outputs.
    pub outputs: Vec<Value>,
    /// The first node (in file order, subgraph bodies after their graph)
    /// whose op Morok does not implement.
    pub unsupported: Option<Unsupported>,
}

/// How errors name node `index`: its `name`, or `#index -> first output`.
pub fn node_label(node: &NodeProto, index: usize) -> String {
    match node.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => format!(
            "#{index} -> {}",
            node.output.first().map(String::as_str).unwrap_or("?")
        ),
    }
}

/// Why Morok cannot run an op of type `op` in `domain`, or `None` when it can.
pub fn unsupported_reason(domain: &str, op: &str) -> Option<String> {
    if !domain.is_empty() && domain != "ai.onnx" {
        Some(format!("operator domain {domain:?}"))
    } else if crate::SUPPORTED_OPS.binary_search(&op).is_err() {
        Some("no Morok implementation of this op".to_string())
    } else {
        None
    }
}

/// The outline of the model in `bytes`, or why the bytes are no model.
pub fn outline(bytes: &[u8]) -> Result<Outline, String> {
    let model = ModelProto::decode(bytes).map_err(|e| format!("not an ONNX model: {e}"))?;
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| "the model has no graph".to_string())?;
    let opset = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
        .and_then(|o| o.version)
        .ok_or_else(|| "the model imports no default-domain opset".to_string())?;
    let initialized: Vec<&str> = graph
        .initializer
        .iter()
        .filter_map(|i| i.name.as_deref())
        .collect();
    let inputs = graph
        .input
        .iter()
        .filter(|i| !initialized.contains(&i.name.as_deref().unwrap_or("")))
        .map(|i| Value::of(&i.name, i.r#type.as_ref()))
        .collect();
    let outputs = graph
        .output
        .iter()
        .map(|o| Value::of(&o.name, o.r#type.as_ref()))
        .collect();
    // Graphs still to visit (the main graph, then subgraph bodies): a work
    // list, not recursion, so a deeply nested file cannot overflow the stack.
    let mut pending = vec![graph];
    let mut unsupported = None;
    while let (None, Some(g)) = (&unsupported, pending.pop()) {
        for (index, node) in g.node.iter().enumerate() {
            let op = node.op_type.clone().unwrap_or_default();
            if let Some(reason) = unsupported_reason(node.domain.as_deref().unwrap_or(""), &op) {
                unsupported = Some(Unsupported {
                    node: node_label(node, index),
                    op,
                    reason,
                });
                break;
            }
            pending.extend(node.attribute.iter().filter_map(|a| a.g.as_ref()));
            pending.extend(node.attribute.iter().flat_map(|a| a.graphs.iter()));
        }
    }
    Ok(Outline {
        opset,
        inputs,
        outputs,
        unsupported,
    })
}
