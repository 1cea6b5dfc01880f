//! `#[morok::kernel]` on a fn and the function-like `kernel!` closure.

use crate::emit::{check_body, check_result_names, dim_names, failed_body, push_err, signature};
use crate::sig::{parse_param, parse_tensor_type, tensor_type_from_rust, Param, TensorType};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, Result, Token};

/// The attribute's arguments: dims fixed to values (`B = 32, N = 4`).
struct FixedDims(Vec<(Ident, usize)>);

impl Parse for FixedDims {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut dims = Vec::new();
        while !input.is_empty() {
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: syn::LitInt = input.parse()?;
            let v: usize = value.base10_parse()?;
            if v == 0 {
                return Err(Error::new(value.span(), "a fixed dim is at least 1"));
            }
            dims.push((name, v));
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(FixedDims(dims))
    }
}

/// Checks the fixed dims against the signature's names: each must be one
/// of them, once.
fn check_fixed(fixed: &[(Ident, usize)], params: &[Param]) -> Result<Vec<(String, usize)>> {
    let names = dim_names(params)?;
    let mut out: Vec<(String, usize)> = Vec::new();
    for (id, v) in fixed {
        let n = id.to_string();
        if !names.contains(&n) {
            return Err(Error::new(
                id.span(),
                format!(
                    "`{n}` is no dim of the signature (its dims are [{}])",
                    names.join(", ")
                ),
            ));
        }
        if out.iter().any(|(m, _)| *m == n) {
            return Err(Error::new(id.span(), format!("dim `{n}` is fixed twice")));
        }
        out.push((n, *v));
    }
    Ok(out)
}

/// Expands `#[morok::kernel] fn name(x: Tensor<f32, B, 64>, ...) -> Tensor<..> { .. }`
/// (or `#[morok::kernel(B = 32)]`) into the function and its hidden
/// ahead-of-time spec `__morok_aot_name()` (see `morok::aot`).
pub fn kernel_attr(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = None;
    let fixed = match syn::parse2::<FixedDims>(attr) {
        Ok(f) => f.0,
        Err(e) => {
            push_err(&mut errors, e);
            Vec::new()
        }
    };
    let f: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error(),
    };
    let mut params = Vec::new();
    let mut idents = Vec::new();
    for a in &f.sig.inputs {
        let syn::FnArg::Typed(t) = a else {
            push_err(
                &mut errors,
                Error::new_spanned(a, "a kernel takes no `self`"),
            );
            continue;
        };
        let syn::Pat::Ident(p) = &*t.pat else {
            push_err(
                &mut errors,
                Error::new_spanned(&t.pat, "a kernel parameter is a plain name"),
            );
            continue;
        };
        // A repeated name (an error reported below) gets a fresh name so
        // that rustc does not report it a second time.
        let id = if idents.contains(&p.ident) {
            format_ident!("__morok_duplicate_{}", idents.len())
        } else {
            p.ident.clone()
        };
        idents.push(id);
        match tensor_type_from_rust(&t.ty) {
            Ok(ty) => params.push(Param {
                name: p.ident.clone(),
                ty,
            }),
            Err(e) => push_err(&mut errors, e),
        }
    }
    let result = match &f.sig.output {
        syn::ReturnType::Type(_, t) => tensor_type_from_rust(t)
            .map_err(|e| push_err(&mut errors, e))
            .ok(),
        syn::ReturnType::Default => {
            push_err(
                &mut errors,
                Error::new_spanned(&f.sig, "a kernel returns `Tensor<dtype, dims...>`"),
            );
            None
        }
    };
    let name = f.sig.ident.to_string();
    let graph = if errors.is_none() {
        check_fixed(&fixed, &params).and_then(|fixed| {
            graph(
                &name,
                &params,
                result.as_ref(),
                &f.block.stmts,
                &f.block,
                &fixed,
            )
        })
    } else {
        Err(errors.take().expect("checked"))
    };
    let (attrs, vis, ident) = (&f.attrs, &f.vis, &f.sig.ident);
    let spec_fn = format_ident!("__morok_aot_{}", ident);
    let (code, spec, errs) = match graph {
        Ok(g) => {
            let (sig, table) = (&g.sig, &g.table);
            let spec = quote!({
                #sig
                #table
                ::morok::aot::KernelSpec { sig: &__MOROK_SIG, graph: &__MOROK_GRAPH }
            });
            (g.body(), spec, TokenStream::new())
        }
        Err(e) => (
            failed_body(&idents),
            quote!({ ::core::unreachable!() }),
            e.to_compile_error(),
        ),
    };
    quote! {
        #errs
        #(#attrs)*
        #[track_caller]
        #vis fn #ident(#(#idents: &::morok::Tensor),*) -> ::morok::Result<::morok::Tensor> #code

        /// What a build script needs to compile this kernel ahead of time
        /// (`morok::aot::kernels!`).
        #[doc(hidden)]
        #[allow(dead_code)]
        #vis fn #spec_fn() -> ::morok::aot::KernelSpec #spec
    }
}

/// The generated parts of a checked kernel: its `static` signature and
/// its `static` graph (`morok::dsl::graph::Graph`).
struct Graph {
    sig: TokenStream,
    table: TokenStream,
    ids: Vec<Ident>,
}

impl Graph {
    /// The body of a kernel whose result is realized: the call site's
    /// cache (`morok::dsl::rt::CallSite`) builds the graph on a cold call
    /// only.
    fn body(&self) -> TokenStream {
        let (sig, table, ids) = (&self.sig, &self.table, &self.ids);
        quote!({
            #sig
            #table
            static __MOROK_SITE: ::morok::dsl::rt::CallSite =
                ::morok::dsl::rt::CallSite::new(&__MOROK_SIG, &__MOROK_GRAPH);
            __MOROK_SITE.call(&[#(#ids),*])
        })
    }
}

/// Checks a kernel and generates its [`Graph`].
fn graph(
    name: &str,
    params: &[Param],
    result: Option<&TensorType>,
    stmts: &[syn::Stmt],
    whole: &impl quote::ToTokens,
    fixed: &[(String, usize)],
) -> Result<Graph> {
    let names = dim_names(params)?;
    if let Some(r) = result {
        check_result_names(r, &names)?;
    }
    let layers = HashMap::new();
    let body = check_body(params, &names, &layers, &[], stmts, whole, result)?;
    let sig = signature(name, params, &names, fixed);
    let ids: Vec<Ident> = params.iter().map(|p| p.name.clone()).collect();
    Ok(Graph {
        sig,
        table: body.graph_static(),
        ids,
    })
}

/// The input of `kernel!`: `|a: f32[N, K], ...| (-> f32[..])? body`.
pub struct KernelClosure {
    params: Vec<Param>,
    result: Option<TensorType>,
    body: syn::Expr,
}

impl Parse for KernelClosure {
    fn parse(input: ParseStream) -> Result<Self> {
        input.parse::<Token![|]>()?;
        let mut params = Vec::new();
        while !input.peek(Token![|]) {
            params.push(parse_param(input)?);
            if !input.peek(Token![|]) {
                input.parse::<Token![,]>()?;
            }
        }
        input.parse::<Token![|]>()?;
        let result = if input.peek(Token![->]) {
            input.parse::<Token![->]>()?;
            Some(parse_tensor_type(input)?)
        } else {
            None
        };
        let body = input.parse()?;
        Ok(KernelClosure {
            params,
            result,
            body,
        })
    }
}

/// Expands `kernel!(|a: f32[N, K], b: f32[K, M]| expr)` into a closure
/// `|&Tensor, &Tensor| -> morok::Result<Tensor>`.
pub fn kernel_closure(input: TokenStream) -> TokenStream {
    let k: KernelClosure = match syn::parse2(input) {
        Ok(k) => k,
        Err(e) => return e.to_compile_error(),
    };
    let idents: Vec<Ident> = k.params.iter().map(|p| p.name.clone()).collect();
    let stmts: Vec<syn::Stmt> = match &k.body {
        syn::Expr::Block(b) => b.block.stmts.clone(),
        e => vec![syn::Stmt::Expr(e.clone(), None)],
    };
    let (code, errs) = match graph(
        "kernel!",
        &k.params,
        k.result.as_ref(),
        &stmts,
        &k.body,
        &[],
    ) {
        Ok(g) => (g.body(), TokenStream::new()),
        Err(e) => (failed_body(&idents), e.to_compile_error()),
    };
    quote!({
        #errs
        move |#(#idents: &::morok::Tensor),*| -> ::morok::Result<::morok::Tensor> #code
    })
}

/// Expands `aot_kernels!(path::to::f, g)` into
/// `[path::to::__morok_aot_f(), __morok_aot_g()]`: the specs that
/// `#[morok::kernel]` generates beside each function.
pub fn aot_kernels(input: TokenStream) -> TokenStream {
    let parser = syn::punctuated::Punctuated::<syn::Path, Token![,]>::parse_terminated;
    let paths = match syn::parse::Parser::parse2(parser, input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error(),
    };
    let specs = paths.into_iter().map(|mut p| {
        if let Some(last) = p.segments.last_mut() {
            last.ident = format_ident!("__morok_aot_{}", last.ident, span = last.ident.span());
        }
        quote!(#p())
    });
    quote!([#(#specs),*])
}
