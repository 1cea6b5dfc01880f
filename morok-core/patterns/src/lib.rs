//! The `patterns!` macro: declarative rewrite rules for `morok-core`.
//!
//! The macro turns a list of rules into an expression of type
//! `morok_core::rewrite::PatternMatcher<C>`. It checks op names and operand
//! counts against the op table shared with `morok-core` (`op_table.rs`),
//! so mistakes are compile errors at the offending tokens.
//!
//! The pipeline is `parse` (tokens to `ast`), `expand` (checks from
//! `check` and `bindings`, template instantiation) and `codegen`.
//! The syntax is documented on [`patterns!`].

#![warn(missing_docs)]

mod ast;
mod bindings;
mod check;
mod codegen;
mod expand;
mod ops;
mod parse;

use proc_macro::TokenStream;

/// Builds a `PatternMatcher` from declarative rewrite rules.
///
/// ```text
/// patterns! {
///     @context MyCtx;          // optional, default (); rules see `ctx: &mut MyCtx`
///     @name "symbolic";        // optional, default "patterns!@file:line"
///     Add[x, @zero] ~> x,                                // commutative
///     Sub(x, @zero) ~> x,                                // ordered
///     Idiv(x, x) ~> UOp::one(x.dtype()),                 // same node twice
///     Add(a @const(av), b @const(bv)) => fold(a, av, bv),// fallible rhs
///     n @ Mul(x, @one) if x.dtype() == n.dtype() ~> x,   // root binding, guard
///     Where(@true, t, _) ~> |t| t,                       // closure form
///     End(x, ..) ~> x,                                   // any further operands
///     for op in binary [Add, Mul] {                      // one rule per op
///         op(@const(a), @const(b)) => eval(op, a, b),
///     },
///     n @ _ => visit(n, ctx),                            // any op
///     Sqrt(x) => try checked(x),                         // may fail: Result<Option<_>, _>
/// }
/// ```
///
/// Patterns: `Op(p, ...)` matches a node of that op with exactly that many
/// operands (`Op(p, ..)`: at least that many); `Op[p, q]` also tries the
/// operands swapped. `x` binds a node (a repeated name must be the same
/// node, by pointer); `x @ p` binds the node `p` matched; `_` matches
/// anything; `@zero`, `@one` match CONST zero / one of any dtype,
/// `@true`, `@false` bool constants; `@const` any CONST, `@const(v)` binds
/// its value.
///
/// In guards and right-hand sides, a node binding is a `&Arc<UOp>`, a
/// value binding a `ConstValue`, a template's op variable an `Op`, and
/// `ctx` the `&mut` context. `~>` rules produce an `Arc<UOp>` or
/// `&Arc<UOp>`; `=>` rules an `Option` of either (and may use `?`);
/// `=> try` rules a `Result<Option<_>, E>` with `E: Into<RuleError>`: an
/// error stops the rewrite with a `RewriteError` naming the matcher, the
/// rule (index and line) and the node. A
/// closure rhs `|a, b| body` limits the bindings visible in `body` to
/// those listed. Rules are tried in order; the first replacement wins.
#[proc_macro]
pub fn patterns(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as ast::Input);
    match expand::expand(&input) {
        Ok(rules) => codegen::matcher(&input, &rules).into(),
        Err(e) => errors(e).into(),
    }
}

/// The op table (`op_table.rs`) as tokens: `op_groups! { … } op_table! { … }`,
/// for `morok-core` to generate its `OpGroup` and `Op` enums from (it
/// defines both macros). Not for other users.
#[doc(hidden)]
#[proc_macro]
pub fn op_table_source(_input: TokenStream) -> TokenStream {
    include_str!("op_table.rs")
        .parse()
        .expect("op_table.rs is valid Rust tokens")
}

/// The errors as an expression: one `compile_error!` statement each, in a
/// block of type `!` so no follow-up type errors are reported.
fn errors(e: syn::Error) -> proc_macro2::TokenStream {
    let errors = e.into_iter().map(|e| e.to_compile_error());
    quote::quote!({
        #(#errors;)*
        ::core::unreachable!()
    })
}
