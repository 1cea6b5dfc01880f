//! The ONNX operators, a function per op (or per family of ops sharing one
//! rule) in files by family, each built from the public `Tensor` API.
//!
//! [`lookup`] maps an op type to its function; [`OpCtx`] gives a function
//! its node's inputs, attributes (with their defaults) and opset, so that
//! version-specific forms (an attribute that became an input, a changed
//! default) are chosen in the op's own code.

mod attention;
mod control;
mod elementwise;
mod indexing;
mod loss;
mod nn;
mod norm;
mod quant;
mod reduce;
mod resize;
mod sampling;
mod shape;
mod signal;

use crate::exec::Values;
use crate::graph::{Graph, Node};
use crate::proto::{attribute_proto::AttributeType, AttributeProto, TensorProto};
use morok::{DType, Tensor};
use std::sync::Arc;

/// Why an op could not be built.
pub(crate) enum OpError {
    /// A tensor op failed.
    Tensor(Box<morok::Error>),
    /// The op, attribute value or dtype is not supported.
    Unsupported(String),
    /// The node is malformed (a missing input, a bad attribute).
    Invalid(String),
    /// An error from a subgraph, passed through unchanged.
    Nested(Box<crate::Error>),
}

impl From<morok::Error> for OpError {
    fn from(e: morok::Error) -> Self {
        OpError::Tensor(Box::new(e))
    }
}

impl From<crate::Error> for OpError {
    fn from(e: crate::Error) -> Self {
        OpError::Nested(Box::new(e))
    }
}

/// The result of an op function.
pub(crate) type OpResult<T = Vec<Tensor>> = std::result::Result<T, OpError>;

/// An op's function: the node's outputs from its context.
pub(crate) type OpFn = fn(&OpCtx<'_>) -> OpResult;

/// Returns `Err(OpError::Invalid(format!(...)))`.
macro_rules! invalid {
    ($($arg:tt)*) => {
        return Err($crate::ops::OpError::Invalid(format!($($arg)*)))
    };
}
/// Returns `Err(OpError::Unsupported(format!(...)))`.
macro_rules! unsupported {
    ($($arg:tt)*) => {
        return Err($crate::ops::OpError::Unsupported(format!($($arg)*)))
    };
}
pub(crate) use {invalid, unsupported};

/// What an op function sees of its node.
pub(crate) struct OpCtx<'a> {
    /// The node.
    pub node: &'a Node,
    /// Its inputs (`None` for an omitted optional input).
    pub inputs: Vec<Option<Tensor>>,
    /// The model's default-domain opset.
    pub opset: i64,
    /// Every value visible at this node (for subgraphs).
    pub values: &'a Values,
}

impl OpCtx<'_> {
    /// Required input `i`.
    pub fn input(&self, i: usize) -> OpResult<&Tensor> {
        match self.inputs.get(i) {
            Some(Some(t)) => Ok(t),
            _ => invalid!("required input {i} is missing"),
        }
    }

    /// Optional input `i`.
    pub fn opt(&self, i: usize) -> Option<&Tensor> {
        self.inputs.get(i).and_then(Option::as_ref)
    }

    /// The attribute `name`, if set.
    pub fn attr(&self, name: &str) -> Option<&AttributeProto> {
        self.node
            .proto
            .attribute
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
    }

    fn typed(&self, name: &str, kind: AttributeType) -> OpResult<Option<&AttributeProto>> {
        match self.attr(name) {
            Some(a) if a.r#type == Some(kind as i32) => Ok(Some(a)),
            Some(a) if a.r#type.is_none() => Ok(Some(a)),
            Some(a) => invalid!(
                "attribute {name} has type {:?}, expected {:?}",
                a.r#type
                    .and_then(|t| AttributeType::try_from(t).ok())
                    .unwrap_or(AttributeType::Undefined),
                kind
            ),
            None => Ok(None),
        }
    }

    /// Integer attribute `name`, or `default`.
    pub fn int(&self, name: &str, default: i64) -> OpResult<i64> {
        Ok(self
            .typed(name, AttributeType::Int)?
            .and_then(|a| a.i)
            .unwrap_or(default))
    }

    /// Float attribute `name`, or `default`.
    pub fn float(&self, name: &str, default: f32) -> OpResult<f32> {
        Ok(self
            .typed(name, AttributeType::Float)?
            .and_then(|a| a.f)
            .unwrap_or(default))
    }

    /// Integer-list attribute `name`, if set.
    pub fn ints(&self, name: &str) -> OpResult<Option<Vec<i64>>> {
        Ok(self
            .typed(name, AttributeType::Ints)?
            .map(|a| a.ints.clone()))
    }

    /// Float-list attribute `name`, if set.
    pub fn floats(&self, name: &str) -> OpResult<Option<Vec<f32>>> {
        Ok(self
            .typed(name, AttributeType::Floats)?
            .map(|a| a.floats.clone()))
    }

    /// String attribute `name`, or `default`.
    pub fn string(&self, name: &str, default: &str) -> OpResult<String> {
        Ok(self
            .typed(name, AttributeType::String)?
            .and_then(|a| a.s.as_ref())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .unwrap_or_else(|| default.to_string()))
    }

    /// Tensor attribute `name`, if set.
    pub fn tensor_attr(&self, name: &str) -> OpResult<Option<&TensorProto>> {
        Ok(self
            .typed(name, AttributeType::Tensor)?
            .and_then(|a| a.t.as_ref()))
    }

    /// The prepared subgraph attribute `name`.
    pub fn graph(&self, name: &str) -> OpResult<&Arc<Graph>> {
        match self.node.subgraphs.get(name) {
            Some(g) => Ok(g),
            None => invalid!("graph attribute {name} is missing"),
        }
    }

    /// An axis attribute or value normalized against `rank`.
    pub fn axis(&self, axis: i64, rank: usize) -> OpResult<usize> {
        let r = rank as i64;
        if axis < -r.max(1) || axis >= r.max(1) {
            invalid!("axis {axis} out of range for rank {rank}");
        }
        Ok(if axis < 0 {
            (axis + r) as usize
        } else {
            axis as usize
        })
    }
}

/// The values of a small integer tensor (shapes, axes, pads, ...), read
/// on the host (realizing it if it is computed).
pub(crate) fn host_ints(t: &Tensor) -> OpResult<Vec<i64>> {
    if !(t.dtype().is_int() || t.dtype().is_bool()) {
        invalid!("expected an integer tensor, got {}", t.dtype());
    }
    Ok(t.cast(DType::I64)?.to_vec::<i64>()?)
}

/// The values of a small tensor as `f64`, read on the host.
pub(crate) fn host_floats(t: &Tensor) -> OpResult<Vec<f64>> {
    Ok(t.cast(DType::F64)?.to_vec::<f64>()?)
}

/// The one value of a scalar (or one-element) tensor, as `f64`.
pub(crate) fn host_scalar(t: &Tensor) -> OpResult<f64> {
    let v = host_floats(t)?;
    match v.as_slice() {
        [x] => Ok(*x),
        _ => invalid!(
            "expected one value, got {} (shape {:?})",
            v.len(),
            t.shape()
        ),
    }
}

/// The most elements an op may create from sizes read out of the graph
/// (a `ConstantOfShape`, `Expand`, `Tile`, `Range`...): 2^31.
pub(crate) const MAX_CREATED: usize = 1 << 31;

/// `sizes` as a shape, rejecting negative sizes and huge products.
pub(crate) fn to_shape(sizes: &[i64]) -> OpResult<Vec<usize>> {
    let mut total = 1usize;
    let mut shape = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let Ok(s) = usize::try_from(s) else {
            invalid!("negative size {s} in {sizes:?}");
        };
        total = total.saturating_mul(s);
        shape.push(s);
    }
    if total > MAX_CREATED {
        invalid!("shape {sizes:?} has {total} elements (more than {MAX_CREATED})");
    }
    Ok(shape)
}

/// Every family's table of (op type, function).
const FAMILIES: [&[(&str, OpFn)]; 12] = [
    sampling::TABLE,
    norm::TABLE,
    signal::TABLE,
    attention::TABLE,
    loss::TABLE,
    elementwise::TABLE,
    reduce::TABLE,
    shape::TABLE,
    indexing::TABLE,
    nn::TABLE,
    quant::TABLE,
    control::TABLE,
];

/// The function of op type `op`, if Morok implements it.
pub(crate) fn lookup(op: &str) -> Option<OpFn> {
    FAMILIES
        .iter()
        .flat_map(|t| t.iter())
        .find(|(name, _)| *name == op)
        .map(|(_, f)| *f)
}

/// Every ONNX op type the importer implements, sorted.
pub fn supported_ops() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = FAMILIES
        .iter()
        .flat_map(|t| t.iter().map(|(name, _)| *name))
        .collect();
    all.sort_unstable();
    all
}
