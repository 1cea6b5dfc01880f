//! Layers with parameters, for models written with the `Tensor` API and
//! trained with [`crate::optim`]. They are the layers `model!` structs
//! hold ([`crate::dsl::layers`]), with PyTorch's parameter names, shapes
//! and default initialization; their parameters are realized tensors, so
//! an optimizer can update them in place.

pub use crate::dsl::layers::{Conv2d, Embedding, LayerNorm, Linear};
