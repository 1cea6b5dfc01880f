//! ONNX import for Morok: load a `.onnx` model and run it as lazy
//! [`morok::Tensor`]s.
//!
//! ```no_run
//! use morok::{DType, Tensor};
//! use morok_onnx::Model;
//!
//! let model = Model::load("model.onnx")?;
//! for input in model.inputs() {
//!     println!("{}: {} {:?}", input.name, input.type_name, input.shape);
//! }
//! let x = Tensor::zeros(&[1, 3, 224, 224], DType::F32);
//! let outputs = model.run(&[(model.inputs()[0].name.as_str(), &x)])?;
//! let logits = outputs[0].to_vec::<f32>().map_err(|e| morok_onnx::Error::Op {
//!     node: "output".into(),
//!     op: "to_vec".into(),
//!     source: Box::new(e),
//! })?;
//! # Ok::<(), morok_onnx::Error>(())
//! ```
//!
//! The model's protobuf is parsed with `prost` (generated code checked in
//! in `morok-onnx-schema`, shared with the `onnx!` macro), initializers (also external-data ones, read beside
//! the model file) become tensors at load, and [`Model::run`] builds each
//! node's outputs with the tensor API. Values an op needs on the host (a
//! `Reshape`'s shape, a `Slice`'s bounds, an `If`'s condition) are read
//! when the node is built; everything else stays lazy.

mod data;
mod error;
mod exec;
mod graph;
mod info;
mod model;
mod ops;

pub use data::tensor_from_pb;
pub use error::{Error, Result};
pub use info::{Dim, ValueInfo};
pub use model::{Model, MAX_OPSET, MIN_OPSET};
pub use morok_onnx_macros::onnx;
pub use morok_onnx_schema::proto;
pub use ops::supported_ops;

pub mod typed;
pub use typed::{Fixed, Named, Typed};

/// The `half` crate, for the `f16`/`bf16` element types `onnx!` names.
#[doc(hidden)]
pub use half;

/// `morok`, for the paths `onnx!` generates.
#[doc(hidden)]
pub use morok;
