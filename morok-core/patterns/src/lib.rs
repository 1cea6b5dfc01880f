//! The `patterns!` proc macro (placeholder until the DSL lands).
use proc_macro::TokenStream;

/// Builds a `PatternMatcher` from declarative rules.
#[proc_macro]
pub fn patterns(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
