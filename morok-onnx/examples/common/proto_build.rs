//! Builds the parts of the models the example and the tests write in
//! code: float tensor inputs and outputs, nodes, and the model's bytes.

use morok_onnx::proto::{
    tensor_proto::DataType, tensor_shape_proto::dimension, tensor_shape_proto::Dimension,
    type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};
use prost::Message;

/// A node named `name` applying `op` to `inputs`, giving `outputs`.
pub fn node(name: &str, op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        name: Some(name.into()),
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// The encoded model of `graph` (IR version 8, default-domain opset 17,
/// producer `morok proto_build`).
pub fn model_bytes(graph: GraphProto) -> Vec<u8> {
    ModelProto {
        ir_version: Some(8),
        producer_name: Some("morok proto_build".into()),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// A float tensor named `name` of `dims` (`Ok(size)` or `Err(dim name)`).
pub fn value(name: &str, dims: &[Result<i64, &str>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Ok(n) => dimension::Value::DimValue(*n),
                Err(p) => dimension::Value::DimParam(p.to_string()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(DataType::Float as i32),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}
