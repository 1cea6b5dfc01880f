//! `#[morok::kernel]` on a fn and the function-like `kernel!` closure.

use crate::emit::{
    bind_args, check_body, check_result_names, dim_names, failed_body, push_err, signature,
};
use crate::sig::{parse_param, parse_tensor_type, tensor_type_from_rust, Param, TensorType};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, Result, Token};

/// Expands `#[morok::kernel] fn name(x: Tensor<f32, B, 64>, ...) -> Tensor<..> { .. }`.
pub fn kernel_attr(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = None;
    if !attr.is_empty() {
        push_err(
            &mut errors,
            Error::new_spanned(&attr, "`#[morok::kernel]` takes no arguments"),
        );
    }
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
    let body = if errors.is_none() {
        generate(&name, &params, result.as_ref(), &f.block.stmts, &f.block)
    } else {
        Err(errors.take().expect("checked"))
    };
    let (attrs, vis, ident) = (&f.attrs, &f.vis, &f.sig.ident);
    let (code, errs) = match body {
        Ok(b) => (b, TokenStream::new()),
        Err(e) => (failed_body(&idents), e.to_compile_error()),
    };
    quote! {
        #errs
        #(#attrs)*
        #[track_caller]
        #vis fn #ident(#(#idents: &::morok::Tensor),*) -> ::morok::Result<::morok::Tensor> #code
    }
}

/// The checked body of a kernel whose result is realized: the graph code
/// as a closure that the call site's cache (`morok::dsl::rt::CallSite`)
/// runs on a cold call only.
fn generate(
    name: &str,
    params: &[Param],
    result: Option<&TensorType>,
    stmts: &[syn::Stmt],
    whole: &impl quote::ToTokens,
) -> Result<TokenStream> {
    let names = dim_names(params)?;
    if let Some(r) = result {
        check_result_names(r, &names)?;
    }
    let layers = HashMap::new();
    let body = check_body(params, &names, &layers, &[], stmts, whole, result)?;
    let sig = signature(name, params, &names);
    let bind = bind_args(params, &names);
    let (stmts, res) = (body.stmts, body.result);
    let ids: Vec<&Ident> = params.iter().map(|p| &p.name).collect();
    let at = 0..ids.len();
    Ok(quote!({
        #sig
        static __MOROK_SITE: ::morok::dsl::rt::CallSite = ::morok::dsl::rt::CallSite::new(&__MOROK_SIG);
        __MOROK_SITE.call(
            &[#(#ids),*],
            &|__args: &[&::morok::Tensor]| -> ::morok::Result<::morok::Tensor> {
                #(let #ids: &::morok::Tensor = __args[#at];)*
                #bind
                #(#stmts)*
                ::core::result::Result::Ok(::core::clone::Clone::clone(#res))
            },
        )
    }))
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
    let (code, errs) = match generate("kernel!", &k.params, k.result.as_ref(), &stmts, &k.body) {
        Ok(b) => (b, TokenStream::new()),
        Err(e) => (failed_body(&idents), e.to_compile_error()),
    };
    quote!({
        #errs
        move |#(#idents: &::morok::Tensor),*| -> ::morok::Result<::morok::Tensor> #code
    })
}
