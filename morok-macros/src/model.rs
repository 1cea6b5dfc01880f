//! `model!`: a struct of layers, its constructor, parameters, safetensors
//! I/O and checked forward functions.

use crate::emit::{check_body, check_result_names, dim_names, failed_body, push_err, signature};
use crate::infer::Ty;
use crate::layers::{DeclaredLayer, LayerSpec};
use crate::sig::{parse_param, parse_tensor_type, Param, TensorType};
use morok_core::shape::SymDim;
use morok_core::ScalarType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, Result, Token};

/// One field: `name: Kind(args)`; `layer` is the parse error when the
/// layer is malformed (the struct is still emitted).
struct Field {
    name: Ident,
    layer: std::result::Result<LayerSpec, Error>,
    /// The declaration's tokens, for error spans.
    decl: TokenStream,
}

/// `fn forward(x: f32[B, 64]) -> f32[B, 10] { ... }`.
struct Forward {
    attrs: Vec<syn::Attribute>,
    vis: syn::Visibility,
    name: Ident,
    params: Vec<Param>,
    result: TensorType,
    body: syn::Block,
}

struct ModelDef {
    attrs: Vec<syn::Attribute>,
    vis: syn::Visibility,
    name: Ident,
    fields: Vec<Field>,
    fns: Vec<Forward>,
}

fn parse_field(input: ParseStream) -> Result<Field> {
    let name: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    // Take the layer's tokens (a kind and one group) first, so a bad layer
    // is reported without losing the rest of the struct.
    let kind: Ident = input.parse()?;
    let group: proc_macro2::Group = input.parse()?;
    let tokens = quote!(#kind #group);
    let layer = syn::parse::Parser::parse2(LayerSpec::parse, tokens);
    let decl = quote!(#name: #kind #group);
    Ok(Field { name, layer, decl })
}

impl Parse for ModelDef {
    fn parse(input: ParseStream) -> Result<Self> {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let vis = input.parse()?;
        input.parse::<Token![struct]>()?;
        let name = input.parse()?;
        let content;
        syn::braced!(content in input);
        let fields = content
            .parse_terminated(parse_field, Token![,])?
            .into_iter()
            .collect();
        let mut fns = Vec::new();
        while !input.is_empty() {
            let attrs = input.call(syn::Attribute::parse_outer)?;
            let vis = input.parse()?;
            input.parse::<Token![fn]>()?;
            let name = input.parse()?;
            let args;
            syn::parenthesized!(args in input);
            let params = args
                .parse_terminated(parse_param, Token![,])?
                .into_iter()
                .collect();
            input.parse::<Token![->]>()?;
            let result = parse_tensor_type(input)?;
            let body = input.parse()?;
            fns.push(Forward {
                attrs,
                vis,
                name,
                params,
                result,
                body,
            });
        }
        Ok(ModelDef {
            attrs,
            vis,
            name,
            fields,
            fns,
        })
    }
}

/// Expands `model! { struct ..; fn ..; }`.
pub fn model(input: TokenStream) -> TokenStream {
    let def: ModelDef = match syn::parse2(input) {
        Ok(d) => d,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = None;
    let mut layers = HashMap::new();
    let mut extra = Vec::new();
    // A repeated field (an error) is left out of the struct, so rustc
    // does not report it a second time.
    let mut fields: Vec<&Field> = Vec::new();
    for f in &def.fields {
        if fields.iter().any(|g| g.name == f.name) {
            push_err(
                &mut errors,
                Error::new(f.name.span(), format!("duplicate field name `{}`", f.name)),
            );
            continue;
        }
        fields.push(f);
        match &f.layer {
            Ok(LayerSpec::Param(dims)) => {
                let shape: Vec<SymDim> = dims.iter().map(|&d| SymDim::from(d)).collect();
                extra.push((f.name.to_string(), Ty::Tensor(ScalarType::F32, shape)));
            }
            Ok(l) => {
                let declared = DeclaredLayer {
                    spec: l.clone(),
                    decl: f.decl.clone(),
                };
                layers.insert(f.name.to_string(), declared);
            }
            Err(e) => push_err(&mut errors, e.clone()),
        }
    }
    let (vis, name, attrs) = (&def.vis, &def.name, &def.attrs);
    let field_ty = |f: &Field| match &f.layer {
        Ok(l) => l.field_type(),
        Err(_) => quote!(::morok::dsl::layers::Param),
    };
    let decls = fields.iter().map(|f| {
        let (id, ty) = (&f.name, field_ty(f));
        let doc = format!("The `{id}` layer.");
        quote!(#[doc = #doc] pub #id: #ty,)
    });
    let ok_fields: Vec<(&Ident, &LayerSpec)> = fields
        .iter()
        .filter_map(|f| f.layer.as_ref().ok().map(|l| (&f.name, l)))
        .collect();
    let inits = ok_fields.iter().enumerate().map(|(i, (id, l))| {
        let (ty, args) = (l.field_type(), l.args());
        let i = i as u64;
        quote!(#id: #ty::init(#args, ::morok::dsl::rt::layer_seed(seed, #i))?,)
    });
    let loads = ok_fields.iter().map(|(id, l)| {
        let (ty, args) = (l.field_type(), l.args());
        let prefix = id.to_string();
        quote!(#id: #ty::load(&__file, #prefix, #args)?,)
    });
    let collect = ok_fields.iter().map(|(id, _)| {
        let prefix = id.to_string();
        quote!(::morok::nn::Module::parameters(&self.#id, #prefix, &mut __out);)
    });
    let collect_state = ok_fields.iter().map(|(id, _)| {
        let prefix = id.to_string();
        quote!(::morok::nn::Module::state(&self.#id, #prefix, &mut __out);)
    });
    let modes = ok_fields
        .iter()
        .map(|(id, _)| quote!(::morok::nn::Module::train(&mut self.#id, on);));
    let updates = ok_fields
        .iter()
        .map(|(id, _)| quote!(__out.extend(::morok::nn::Module::take_updates(&self.#id));));
    // A malformed layer is reported at its declaration; its uses would only
    // repeat it as "unknown layer", so the bodies are checked once the
    // declarations are right.
    let declared = fields.iter().all(|f| f.layer.is_ok());
    let fns: Vec<TokenStream> = def
        .fns
        .iter()
        .map(|f| forward(f, &layers, &extra, declared, &mut errors))
        .collect();
    let errs = errors.map(|e| e.to_compile_error());
    let plumbing = if ok_fields.len() == fields.len() {
        quote! {
            /// A model with freshly initialized parameters (PyTorch's default
            /// initialization for each layer kind), reproducible from `seed`.
            pub fn new(seed: u64) -> ::morok::Result<Self> {
                ::core::result::Result::Ok(Self { #(#inits)* })
            }
            /// The parameters in declaration order, named like PyTorch's
            /// `state_dict` (`fc1.weight`, `fc1.bias`, ...).
            pub fn parameters(&self) -> ::std::vec::Vec<(::std::string::String, ::morok::Tensor)> {
                let mut __out = ::std::vec::Vec::new();
                #(#collect)*
                __out
            }
            /// The parameters and buffers (batch normalization's running
            /// statistics), named like PyTorch's `state_dict`: what
            /// `save_safetensors` writes.
            pub fn state(&self) -> ::std::vec::Vec<(::std::string::String, ::morok::Tensor)> {
                let mut __out = ::std::vec::Vec::new();
                #(#collect_state)*
                __out
            }
            /// Training mode (`true`: dropout and batch statistics) or
            /// evaluation mode (`false`, the default), for every layer.
            pub fn train(&mut self, on: bool) {
                #(#modes)*
            }
            /// The state updates of the training-mode forward passes since
            /// the last call (running statistics, dropout keys), for
            /// `Optimizer::minimize_with`.
            pub fn take_updates(&self) -> ::std::vec::Vec<(::morok::Tensor, ::morok::Tensor)> {
                let mut __out = ::std::vec::Vec::new();
                #(#updates)*
                __out
            }
            /// Writes the parameters and buffers to a safetensors file.
            pub fn save_safetensors(&self, path: impl ::core::convert::AsRef<::std::path::Path>) -> ::morok::Result<()> {
                ::morok::dsl::rt::save_safetensors(path.as_ref(), &self.state())
            }
            /// Reads a model saved by `save_safetensors` (or by PyTorch with the
            /// same names and shapes).
            pub fn load_safetensors(path: impl ::core::convert::AsRef<::std::path::Path>) -> ::morok::Result<Self> {
                let __file = ::morok::dsl::rt::ParamFile::open(path.as_ref())?;
                ::core::result::Result::Ok(Self { #(#loads)* })
            }
        }
    } else {
        quote! {
            /// A model (its declaration has errors).
            pub fn new(seed: u64) -> ::morok::Result<Self> {
                let _ = seed;
                ::core::unreachable!()
            }
            /// The parameters (the declaration has errors).
            pub fn parameters(&self) -> ::std::vec::Vec<(::std::string::String, ::morok::Tensor)> {
                ::core::unreachable!()
            }
            /// The parameters and buffers (the declaration has errors).
            pub fn state(&self) -> ::std::vec::Vec<(::std::string::String, ::morok::Tensor)> {
                ::core::unreachable!()
            }
            /// Sets the mode (the declaration has errors).
            pub fn train(&mut self, on: bool) {
                let _ = on;
                ::core::unreachable!()
            }
            /// The state updates (the declaration has errors).
            pub fn take_updates(&self) -> ::std::vec::Vec<(::morok::Tensor, ::morok::Tensor)> {
                ::core::unreachable!()
            }
            /// Writes the parameters (the declaration has errors).
            pub fn save_safetensors(&self, path: impl ::core::convert::AsRef<::std::path::Path>) -> ::morok::Result<()> {
                let _ = path;
                ::core::unreachable!()
            }
            /// Reads a model (the declaration has errors).
            pub fn load_safetensors(path: impl ::core::convert::AsRef<::std::path::Path>) -> ::morok::Result<Self> {
                let _ = path;
                ::core::unreachable!()
            }
        }
    };
    quote! {
        #errs
        #(#attrs)*
        #[derive(Clone, Debug)]
        #vis struct #name { #(#decls)* }
        impl #name {
            #plumbing
            #(#fns)*
        }
    }
}

/// A forward function: `&self` and `&Tensor` arguments, a lazy result
/// (its body is checked only when `check`).
fn forward(
    f: &Forward,
    layers: &HashMap<String, DeclaredLayer>,
    extra: &[(String, Ty)],
    check: bool,
    errors: &mut Option<Error>,
) -> TokenStream {
    let idents: Vec<Ident> = f.params.iter().map(|p| p.name.clone()).collect();
    let kernel = f.name.to_string();
    let checked = (|| {
        if !check {
            return Ok(failed_body(&idents));
        }
        let names = dim_names(&f.params)?;
        check_result_names(&f.result, &names)?;
        let body = check_body(
            &f.params,
            &names,
            layers,
            extra,
            &f.body.stmts,
            &f.body,
            Some(&f.result),
        )?;
        let sig = signature(&kernel, &f.params, &names, &[]);
        let table = body.graph_static();
        let layers = body.used_layers.iter().map(|l| format_ident!("{}", l));
        let fields = extra.iter().map(|(n, _)| format_ident!("{}", n));
        Ok::<_, Error>(quote!({
            #sig
            #table
            __MOROK_GRAPH.build(
                &__MOROK_SIG,
                &[#(#idents),*],
                &[#(&self.#layers as &dyn ::morok::dsl::layers::Layer),*],
                &[#(&self.#fields.value),*],
            )
        }))
    })();
    let code = checked.unwrap_or_else(|e| {
        push_err(errors, e);
        failed_body(&idents)
    });
    let (attrs, vis, name) = (&f.attrs, &f.vis, &f.name);
    let doc = if attrs.iter().any(|a| a.path().is_ident("doc")) {
        quote!()
    } else {
        let d = format!("The model's `{name}` (a lazy tensor; `realize` it to run).");
        quote!(#[doc = #d])
    };
    quote! {
        #(#attrs)*
        #doc
        #[track_caller]
        #vis fn #name(&self, #(#idents: &::morok::Tensor),*) -> ::morok::Result<::morok::Tensor> #code
    }
}
