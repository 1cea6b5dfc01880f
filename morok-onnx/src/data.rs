//! ONNX element types and `TensorProto` payloads as Morok tensors.
//!
//! A `TensorProto` holds its elements in `raw_data` (little-endian bytes),
//! in one of the typed repeated fields (`float_data`, `int32_data`, ...,
//! where 8- and 16-bit types are widened to `int32`), or in a file beside
//! the model (`data_location = EXTERNAL`, with `location`, `offset` and
//! `length` entries). Every length is checked against the dims before any
//! allocation, so a malformed or hostile file gives an error.

use crate::error::{Error, Result};
use crate::proto::TensorProto;
use morok::{DType, ScalarType, Tensor};
use std::path::{Component, Path};

/// The ONNX `DataType` codes of the element types Morok has.
const SUPPORTED: [(i32, ScalarType); 13] = [
    (1, ScalarType::F32),
    (2, ScalarType::U8),
    (3, ScalarType::I8),
    (4, ScalarType::U16),
    (5, ScalarType::I16),
    (6, ScalarType::I32),
    (7, ScalarType::I64),
    (9, ScalarType::Bool),
    (10, ScalarType::F16),
    (11, ScalarType::F64),
    (12, ScalarType::U32),
    (13, ScalarType::U64),
    (16, ScalarType::BF16),
];

/// The ONNX name of a `DataType` code (for messages).
pub fn onnx_type_name(code: i32) -> String {
    crate::proto::tensor_proto::DataType::try_from(code)
        .map(|t| t.as_str_name().to_lowercase())
        .unwrap_or_else(|_| format!("data type {code}"))
}

/// The Morok dtype of an ONNX `DataType` code, or why there is none.
pub fn dtype_of(code: i32) -> Result<DType, String> {
    SUPPORTED
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, s)| DType::scalar(*s))
        .ok_or_else(|| format!("element type {} is not a Morok dtype", onnx_type_name(code)))
}

/// The element count of `dims`, or an error for a negative dim or an
/// overflowing product.
pub fn checked_numel(dims: &[i64], what: &str) -> Result<usize> {
    dims.iter().try_fold(1usize, |acc, &d| {
        let d = usize::try_from(d)
            .map_err(|_| Error::Malformed(format!("{what}: negative dim {d} in {dims:?}")))?;
        acc.checked_mul(d)
            .ok_or_else(|| Error::Malformed(format!("{what}: dims {dims:?} overflow")))
    })
}

/// Where external data may be read from: the model file's directory.
#[derive(Clone, Copy)]
pub struct DataDir<'a>(pub Option<&'a Path>);

/// A `TensorProto` as a tensor of its dims and dtype.
pub fn tensor_from_proto(proto: &TensorProto, dir: DataDir<'_>) -> Result<Tensor> {
    let name = proto.name.clone().unwrap_or_default();
    let what = format!("tensor {name:?}");
    let code = proto.data_type.unwrap_or(0);
    let dtype = dtype_of(code).map_err(|reason| Error::Unsupported {
        node: name.clone(),
        op: "TensorProto".into(),
        reason,
    })?;
    let numel = checked_numel(&proto.dims, &what)?;
    let shape: Vec<usize> = proto.dims.iter().map(|&d| d as usize).collect();
    let external;
    let raw: Option<&[u8]> = if proto.data_location == Some(1) {
        external = read_external(proto, dir, &what)?;
        Some(&external)
    } else {
        proto.raw_data.as_deref()
    };
    let scalar = dtype.scalar_type();
    let size = scalar.itemsize();
    if let Some(bytes) = raw {
        let want = numel
            .checked_mul(size)
            .ok_or_else(|| Error::Malformed(format!("{what}: byte size overflows")))?;
        if bytes.len() != want {
            return Err(Error::Malformed(format!(
                "{what}: {} bytes of data for dims {:?} of {} ({want} bytes)",
                bytes.len(),
                proto.dims,
                dtype
            )));
        }
        return from_le_bytes(bytes, scalar, &shape).map_err(|e| op_error(&name, e));
    }
    let typed_len = match scalar {
        ScalarType::F32 => proto.float_data.len(),
        ScalarType::F64 => proto.double_data.len(),
        ScalarType::I64 => proto.int64_data.len(),
        ScalarType::U32 | ScalarType::U64 => proto.uint64_data.len(),
        _ => proto.int32_data.len(),
    };
    if typed_len != numel {
        return Err(Error::Malformed(format!(
            "{what}: {typed_len} elements of data for dims {:?}",
            proto.dims
        )));
    }
    let i32s = || proto.int32_data.iter().copied();
    let t = match scalar {
        ScalarType::F32 => Tensor::from_vec(proto.float_data.clone(), &shape),
        ScalarType::F64 => Tensor::from_vec(proto.double_data.clone(), &shape),
        ScalarType::I64 => Tensor::from_vec(proto.int64_data.clone(), &shape),
        ScalarType::U64 => Tensor::from_vec(proto.uint64_data.clone(), &shape),
        ScalarType::U32 => Tensor::from_vec(
            proto.uint64_data.iter().map(|&v| v as u32).collect(),
            &shape,
        ),
        ScalarType::I32 => Tensor::from_vec(proto.int32_data.clone(), &shape),
        ScalarType::I16 => Tensor::from_vec(i32s().map(|v| v as i16).collect(), &shape),
        ScalarType::I8 => Tensor::from_vec(i32s().map(|v| v as i8).collect(), &shape),
        ScalarType::U16 => Tensor::from_vec(i32s().map(|v| v as u16).collect(), &shape),
        ScalarType::U8 => Tensor::from_vec(i32s().map(|v| v as u8).collect(), &shape),
        ScalarType::Bool => Tensor::from_vec(i32s().map(|v| v != 0).collect(), &shape),
        ScalarType::F16 => Tensor::from_vec(
            i32s().map(|v| half::f16::from_bits(v as u16)).collect(),
            &shape,
        ),
        ScalarType::BF16 => Tensor::from_vec(
            i32s().map(|v| half::bf16::from_bits(v as u16)).collect(),
            &shape,
        ),
        other => unreachable_dtype(other),
    };
    t.map_err(|e| op_error(&name, e))
}

/// Dtypes outside [`SUPPORTED`] were rejected by [`dtype_of`].
fn unreachable_dtype(other: ScalarType) -> morok::Result<Tensor> {
    Err(morok::Error::dtype(
        "TensorProto",
        format!("{other} is not an ONNX element type"),
    ))
}

fn op_error(name: &str, source: morok::Error) -> Error {
    Error::Op {
        node: name.to_string(),
        op: "TensorProto".into(),
        source: Box::new(source),
    }
}

/// Little-endian bytes as a tensor of `scalar` elements.
fn from_le_bytes(bytes: &[u8], scalar: ScalarType, shape: &[usize]) -> morok::Result<Tensor> {
    macro_rules! decode {
        ($t:ty, $n:expr) => {
            Tensor::from_vec(
                bytes
                    .chunks_exact($n)
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk of exact size")))
                    .collect::<Vec<$t>>(),
                shape,
            )
        };
    }
    match scalar {
        ScalarType::F32 => decode!(f32, 4),
        ScalarType::F64 => decode!(f64, 8),
        ScalarType::I64 => decode!(i64, 8),
        ScalarType::U64 => decode!(u64, 8),
        ScalarType::I32 => decode!(i32, 4),
        ScalarType::U32 => decode!(u32, 4),
        ScalarType::I16 => decode!(i16, 2),
        ScalarType::U16 => decode!(u16, 2),
        ScalarType::I8 => decode!(i8, 1),
        ScalarType::U8 => Tensor::from_vec(bytes.to_vec(), shape),
        ScalarType::Bool => Tensor::from_vec(bytes.iter().map(|&b| b != 0).collect(), shape),
        ScalarType::F16 => decode!(half::f16, 2),
        ScalarType::BF16 => decode!(half::bf16, 2),
        other => unreachable_dtype(other),
    }
}

/// The bytes of an external-data tensor, read from the model's directory.
fn read_external(proto: &TensorProto, dir: DataDir<'_>, what: &str) -> Result<Vec<u8>> {
    let entry = |key: &str| {
        proto
            .external_data
            .iter()
            .find(|e| e.key.as_deref() == Some(key))
            .and_then(|e| e.value.clone())
    };
    let location = entry("location")
        .ok_or_else(|| Error::Malformed(format!("{what}: external data without a location")))?;
    let parse = |key: &str| -> Result<Option<u64>> {
        entry(key)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| Error::Malformed(format!("{what}: external {key} {v:?}")))
            })
            .transpose()
    };
    let offset = parse("offset")?.unwrap_or(0);
    let length = parse("length")?;
    let relative = Path::new(&location);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Error::Malformed(format!(
            "{what}: external data location {location:?} leaves the model's directory"
        )));
    }
    let dir = dir.0.ok_or_else(|| {
        Error::Malformed(format!(
            "{what}: external data {location:?} needs the model's directory (use Model::load)"
        ))
    })?;
    let path = dir.join(relative);
    let io = |e: std::io::Error| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let bytes = std::fs::read(&path).map_err(io)?;
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let end = match length {
        Some(len) => start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX)),
        None => bytes.len(),
    };
    bytes.get(start..end).map(<[u8]>::to_vec).ok_or_else(|| {
        Error::Malformed(format!(
            "{what}: external range {start}..{end} outside {} ({} bytes)",
            path.display(),
            bytes.len()
        ))
    })
}

/// Decodes a serialized `TensorProto` (the `.pb` files of ONNX's test
/// data) into a tensor.
pub fn tensor_from_pb(bytes: &[u8]) -> Result<Tensor> {
    use prost::Message;
    let proto = TensorProto::decode(bytes)
        .map_err(|e| Error::Malformed(format!("not a TensorProto: {e}")))?;
    tensor_from_proto(&proto, DataDir(None))
}
