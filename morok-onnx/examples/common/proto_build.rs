//! Builds the `ValueInfoProto` of a float tensor input or output, for the
//! models the example and the tests write in code.

use morok_onnx::proto::{
    tensor_proto::DataType, tensor_shape_proto::dimension, tensor_shape_proto::Dimension,
    type_proto, TensorShapeProto, TypeProto, ValueInfoProto,
};

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
