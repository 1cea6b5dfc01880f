//! Compile-time front ends for Morok: `#[morok::kernel]`, `kernel!` and
//! `model!`, with shape and dtype errors reported at compile time.
//!
//! The macros check a body with the shape rules of `morok_core::shape`
//! (the same functions the tensor API calls at run time, so both report
//! the same words) and generate code that builds the graph with the tensor
//! API and checks the arguments' run-time dims and dtypes. Use them
//! through the `morok` crate: `#[morok::kernel]`, `morok::dsl::kernel!`,
//! `morok::dsl::model!` (`docs/DSL.md` has the grammar).
#![warn(missing_docs)]

mod emit;
mod infer;
mod kernel;
mod layers;
mod model;
mod sig;

use proc_macro::TokenStream;

/// `#[morok::kernel]`: a fn over `Tensor<dtype, dims...>` parameters
/// becomes `fn(&Tensor, ...) -> morok::Result<Tensor>` returning the
/// realized result.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::kernel_attr(attr.into(), item.into()).into()
}

/// `kernel!(|a: f32[N, K], b: f32[K, M]| expr)`: a checked closure
/// `|&Tensor, &Tensor| -> morok::Result<Tensor>`; re-exported as
/// `morok::dsl::kernel`.
#[proc_macro]
pub fn kernel_closure(input: TokenStream) -> TokenStream {
    kernel::kernel_closure(input.into()).into()
}

/// `aot_kernels!(kernels::mlp, kernels::scale)`: the ahead-of-time specs
/// (`morok::aot::KernelSpec`) of `#[morok::kernel]` functions, as an
/// array; re-exported as `morok::aot::kernels`.
#[proc_macro]
pub fn aot_kernels(input: TokenStream) -> TokenStream {
    kernel::aot_kernels(input.into()).into()
}

/// `model! { struct ..; fn forward(..) -> .. { .. } }`: a struct of layers
/// with `new(seed)`, `parameters()`, safetensors I/O and checked forward
/// functions; re-exported as `morok::dsl::model`.
#[proc_macro]
pub fn model(input: TokenStream) -> TokenStream {
    model::model(input.into()).into()
}
