//! Compile-time front ends for Morok (kernel!, model!, #[kernel]).
//! The macros arrive with the macro-DSL issue; the crate exists so the
//! workspace has its final shape.
#![warn(missing_docs)]

use proc_macro::TokenStream;

/// Identity attribute until the `#[morok::kernel]` front end lands.
#[proc_macro_attribute]
pub fn kernel(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
