//! Generation shared by the three macros: the run-time signature data,
//! the checked body as a static graph, and the error fallback.

use crate::infer::{check_result, Ctx, Ref, Ty, Val};
use crate::layers::DeclaredLayer;
use crate::sig::{dtype_tokens, DimSpec, Param, TensorType};
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashMap;
use syn::{Error, Expr, Result};

/// Adds `e` to the collected errors.
pub fn push_err(errors: &mut Option<Error>, e: Error) {
    match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    }
}

/// The dim names of `params` in order of first appearance; a duplicate
/// parameter name is an error.
pub fn dim_names(params: &[Param]) -> Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    let mut errors = None;
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            push_err(
                &mut errors,
                Error::new(
                    p.name.span(),
                    format!("duplicate parameter name `{}`", p.name),
                ),
            );
        }
        for d in &p.ty.dims {
            if let DimSpec::Name(n, _) = d {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
    }
    errors.map_or(Ok(names), Err)
}

/// Checks that every name of the result type is bound by a parameter; the
/// error spans the name.
pub fn check_result_names(result: &TensorType, names: &[String]) -> Result<()> {
    for d in &result.dims {
        if let DimSpec::Name(n, span) = d {
            if !names.contains(n) {
                return Err(Error::new(
                    *span,
                    format!("unbound dim `{n}` in the result: every name must appear in a parameter's type"),
                ));
            }
        }
    }
    Ok(())
}

/// The `static` signature the generated code checks its arguments against;
/// `fixed` lists the dims the attribute fixes (`B = 32`).
pub fn signature(
    kernel: &str,
    params: &[Param],
    names: &[String],
    fixed: &[(String, usize)],
) -> TokenStream {
    let fixed = names
        .iter()
        .map(|n| match fixed.iter().find(|(f, _)| f == n) {
            Some((_, v)) => quote!(::core::option::Option::Some(#v)),
            None => quote!(::core::option::Option::None),
        });
    let specs = params.iter().map(|p| {
        let name = p.name.to_string();
        let dt = dtype_tokens(p.ty.dtype);
        let dims = p.ty.dims.iter().map(|d| match d {
            DimSpec::Lit(n) => quote!(::morok::dsl::rt::DimSpec::Lit(#n)),
            DimSpec::Name(n, _) => {
                let i = names.iter().position(|x| x == n).unwrap_or(0);
                quote!(::morok::dsl::rt::DimSpec::Name(#i))
            }
        });
        quote!(::morok::dsl::rt::ParamSpec { name: #name, dtype: #dt, dims: &[#(#dims),*] })
    });
    quote! {
        static __MOROK_SIG: ::morok::dsl::rt::Signature = ::morok::dsl::rt::Signature {
            kernel: #kernel,
            names: &[#(#names),*],
            params: &[#(#specs),*],
            fixed: &[#(#fixed),*],
        };
    }
}

/// A checked body: its nodes (`morok::dsl::graph::Node` values), the
/// result's node, and the layers it applies (`Layer(i)` is
/// `used_layers[i]`).
pub struct Body {
    /// The nodes in evaluation order.
    pub nodes: Vec<TokenStream>,
    /// The result's node.
    pub result: usize,
    /// The layers applied, in order of first use.
    pub used_layers: Vec<String>,
}

impl Body {
    /// The `static __MOROK_GRAPH` holding the nodes.
    pub fn graph_static(&self) -> TokenStream {
        let nodes = &self.nodes;
        let result = self.result as u32;
        quote! {
            static __MOROK_GRAPH: ::morok::dsl::graph::Graph = ::morok::dsl::graph::Graph {
                nodes: &[#(#nodes),*],
                result: #result,
            };
        }
    }
}

/// Checks a body (statements of a block, or one expression) against the
/// parameters (nodes `Arg(0..)`), a model's raw parameters `fields`
/// (nodes `Field(0..)`) and the declared result.
pub fn check_body(
    params: &[Param],
    names: &[String],
    layers: &HashMap<String, DeclaredLayer>,
    fields: &[(String, Ty)],
    body: &[syn::Stmt],
    whole: &impl quote::ToTokens,
    declared: Option<&TensorType>,
) -> Result<Body> {
    let mut ctx = Ctx::new(names.to_vec(), layers);
    for (i, p) in params.iter().enumerate() {
        let i = i as u32;
        let v = ctx.bind(p.ty.dtype, p.ty.shape(), quote!(Arg(#i)), &[]);
        ctx.vars.insert(p.name.to_string(), v);
    }
    for (i, (n, ty)) in fields.iter().enumerate() {
        if let Ty::Tensor(dt, shape) = ty {
            let i = i as u32;
            let v = ctx.bind(*dt, shape.clone(), quote!(Field(#i)), &[]);
            ctx.vars.insert(n.clone(), v);
        }
    }
    let (v, last): (Val, Expr) = ctx.block(body, whole)?;
    if let Some(d) = declared {
        check_result(&v, &last, d.dtype, &d.shape())?;
    }
    let Ref::Node(result) = v.r else {
        return Err(Error::new_spanned(
            &last,
            "the result must be a tensor, not a literal",
        ));
    };
    Ok(Body {
        nodes: ctx.nodes,
        result,
        used_layers: ctx.used_layers,
    })
}

/// The body of a function whose expansion failed: it uses its arguments
/// and never returns, so callers type-check and no second error appears.
pub fn failed_body(params: &[syn::Ident]) -> TokenStream {
    quote!({
        let _ = (#(#params),*);
        ::core::unreachable!()
    })
}
