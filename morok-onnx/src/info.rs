//! What a model declares about its inputs and outputs: names, element
//! types and shapes, with symbolic dims kept as named dims.

use crate::data::{dtype_of, onnx_type_name};
use crate::proto::{type_proto, TypeProto, ValueInfoProto};
use morok::DType;
pub use morok_onnx_schema::Dim;

/// A declared graph input or output.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    /// Its name (what [`crate::Model::run`] takes it by).
    pub name: String,
    /// Its element type, when it is a tensor of a dtype Morok has.
    pub dtype: Option<DType>,
    /// The ONNX type, spelled out (`tensor(float)`, `seq(tensor(int64))`).
    pub type_name: String,
    /// Its shape, when the model declares one.
    pub shape: Option<Vec<Dim>>,
}

/// `tensor(float)`, `seq(tensor(int64))`, ... for messages.
fn type_name(tp: Option<&TypeProto>) -> String {
    match tp.and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => {
            format!("tensor({})", onnx_type_name(t.elem_type.unwrap_or(0)))
        }
        Some(type_proto::Value::SequenceType(s)) => {
            format!("seq({})", type_name(s.elem_type.as_deref()))
        }
        Some(type_proto::Value::OptionalType(o)) => {
            format!("optional({})", type_name(o.elem_type.as_deref()))
        }
        Some(type_proto::Value::MapType(_)) => "map".into(),
        Some(type_proto::Value::SparseTensorType(_)) => "sparse_tensor".into(),
        None => "unknown".into(),
    }
}

impl ValueInfo {
    /// The declared value of `proto`.
    pub(crate) fn from_proto(proto: &ValueInfoProto) -> ValueInfo {
        let tp = proto.r#type.as_ref();
        let (dtype, shape) = match tp.and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(t)) => {
                let dtype = dtype_of(t.elem_type.unwrap_or(0)).ok();
                let shape = morok_onnx_schema::declared_dims(t);
                (dtype, shape)
            }
            _ => (None, None),
        };
        ValueInfo {
            name: proto.name.clone().unwrap_or_default(),
            dtype,
            type_name: type_name(tp),
            shape,
        }
    }

    /// Whether the value is a plain tensor (not a sequence, map, optional).
    pub fn is_tensor(&self) -> bool {
        self.type_name.starts_with("tensor(")
    }
}
