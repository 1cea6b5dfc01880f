//! The embedded DSL: `#[morok::kernel]`, [`kernel!`] and [`model!`].
//!
//! The macros check shapes and dtypes at compile time with the rules of
//! `morok_core::shape` (the ones the tensor API uses at run time, so both
//! report the same words) and embed the checked body as a static table
//! of nodes (`graph.rs`) that a cold call turns into a lazy
//! [`Tensor`](crate::Tensor) graph. `docs/DSL.md` has the grammar.
//!
//! ```
//! use morok::dsl::kernel;
//! use morok::Tensor;
//! let f = kernel!(|a: f32[N, K], b: f32[K, M]| (a.dot(b) * 2.0).relu());
//! let a = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?;
//! let b = Tensor::from_vec(vec![3.0f32, -4.0], &[2, 1])?;
//! assert_eq!(f(&a, &b)?.to_vec::<f32>()?, [0.0]);
//! # Ok::<(), morok::Error>(())
//! ```

mod generic;
#[doc(hidden)]
pub mod graph;
pub mod layers;
mod ops;
pub(crate) mod plan;
#[doc(hidden)]
pub mod rt;

pub use morok_macros::{kernel_closure as kernel, model};
