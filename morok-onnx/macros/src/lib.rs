//! `onnx!(Name = "path/model.onnx")`: reads an ONNX model while the crate
//! compiles (path relative to `CARGO_MANIFEST_DIR`), checks that Morok
//! implements every node's op, and generates a struct `Name` with a typed
//! `forward`. Used through `morok_onnx::onnx!`; see that crate's docs.

use morok_onnx_schema::{outline, Dim, Value};
use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

/// The macro's arguments: `Name = "path" (, embed)?`.
struct Args {
    name: Ident,
    path: LitStr,
    embed: bool,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let path: LitStr = input.parse()?;
        let mut embed = false;
        if input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let option: Ident = input.parse()?;
            if option != "embed" {
                return Err(syn::Error::new(
                    option.span(),
                    format!("unknown option `{option}` (the one option is `embed`)"),
                ));
            }
            embed = true;
            input.parse::<Option<Token![,]>>()?;
        }
        Ok(Args { name, path, embed })
    }
}

/// Generates a typed struct for an ONNX model read at compile time.
///
/// `onnx!(Name = "model.onnx")` loads the weights from the file at run
/// time (`Name::load()`); `onnx!(Name = "model.onnx", embed)` embeds the
/// file with `include_bytes!`. A file that cannot be read or parsed, or a
/// node whose op Morok does not implement, is a compile error.
#[proc_macro]
pub fn onnx(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input as Args);
    expand(&args)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

/// The Rust element type of an ONNX `DataType` code.
fn rust_elem(code: i32) -> Option<Tokens> {
    Some(match code {
        1 => quote!(f32),
        2 => quote!(u8),
        3 => quote!(i8),
        4 => quote!(u16),
        5 => quote!(i16),
        6 => quote!(i32),
        7 => quote!(i64),
        9 => quote!(bool),
        10 => quote!(::morok_onnx::half::f16),
        11 => quote!(f64),
        12 => quote!(u32),
        13 => quote!(u64),
        16 => quote!(::morok_onnx::half::bf16),
        _ => return None,
    })
}

/// `Typed<T, (Fixed<3>, Named, ..)>` for a value, or `None` when the model
/// declares no Morok element type or no shape for it.
fn typed(value: &Value) -> Option<Tokens> {
    let elem = rust_elem(value.elem_type?)?;
    let dims = value.shape.as_ref()?;
    if dims.len() > 8 {
        return None;
    }
    let dims = dims.iter().map(|d| match d {
        Dim::Fixed(n) => quote!(::morok_onnx::Fixed<#n>),
        Dim::Named(_) | Dim::Unknown => quote!(::morok_onnx::Named),
    });
    Some(quote!(::morok_onnx::Typed<#elem, (#(#dims,)*)>))
}

/// `[B, 3, 224, 224]` for docs.
fn shape_doc(value: &Value) -> String {
    match &value.shape {
        Some(dims) => format!(
            "[{}]",
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "(no declared shape)".into(),
    }
}

/// A Rust parameter name for input `index` named `name`.
fn param_ident(name: &str, index: usize) -> Ident {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches('_');
    if cleaned.is_empty() || cleaned.starts_with(|c: char| c.is_ascii_digit()) {
        format_ident!("input_{index}")
    } else {
        match syn::parse_str::<Ident>(cleaned) {
            Ok(_) => format_ident!("{}", cleaned),
            Err(_) => format_ident!("input_{index}"),
        }
    }
}

fn expand(args: &Args) -> syn::Result<Tokens> {
    let span = args.path.span();
    let fail = |message: String| syn::Error::new(span, message);
    let root = std::env::var("CARGO_MANIFEST_DIR")
        .map_err(|_| fail("onnx!: CARGO_MANIFEST_DIR is not set".into()))?;
    let relative = args.path.value();
    let full = std::path::Path::new(&root).join(&relative);
    let bytes =
        std::fs::read(&full).map_err(|e| fail(format!("onnx!: cannot read `{relative}`: {e}")))?;
    let model = outline(&bytes).map_err(|e| fail(format!("onnx!: `{relative}`: {e}")))?;
    if let Some(u) = &model.unsupported {
        return Err(fail(format!(
            "onnx!: `{relative}`: node `{}` (op `{}`): {}",
            u.node, u.op, u.reason
        )));
    }
    let name = &args.name;
    let full_str = full.to_string_lossy().into_owned();
    let full_lit = LitStr::new(&full_str, Span::call_site());
    let (load_doc, load_body) = if args.embed {
        (
            format!("Builds the model from `{relative}`, embedded in the binary."),
            quote!(::morok_onnx::Model::from_bytes(include_bytes!(#full_lit))),
        )
    } else {
        (
            format!("Loads the model (weights included) from `{relative}` at run time."),
            quote! {
                // Rebuild the crate when the file changes.
                const _: &[u8] = include_bytes!(#full_lit);
                ::morok_onnx::Model::load(#full_lit)
            },
        )
    };

    let mut params = Vec::new();
    let mut feeds = Vec::new();
    let mut doc_inputs = Vec::new();
    for (index, input) in model.inputs.iter().enumerate() {
        let ident = param_ident(&input.name, index);
        let input_name = &input.name;
        match typed(input) {
            Some(ty) => {
                params.push(quote!(#ident: &#ty));
                feeds.push(quote!((#input_name, #ident.tensor())));
            }
            None => {
                params.push(quote!(#ident: &::morok_onnx::morok::Tensor));
                feeds.push(quote!((#input_name, #ident)));
            }
        }
        doc_inputs.push(format!("`{}`: {}", input.name, shape_doc(input)));
    }
    let mut out_types = Vec::new();
    let mut out_values = Vec::new();
    for (index, output) in model.outputs.iter().enumerate() {
        let take = quote!(outputs
            .next()
            .ok_or_else(|| ::morok_onnx::Error::Malformed(
                format!("the model gave fewer outputs than the {} it declares", #index + 1)
            ))?);
        match typed(output) {
            Some(ty) => {
                out_types.push(ty);
                out_values.push(quote!(::morok_onnx::Typed::new(#take)?));
            }
            None => {
                out_types.push(quote!(::morok_onnx::morok::Tensor));
                out_values.push(take);
            }
        }
    }
    let forward_doc = format!(
        "Runs the model through its plan cache (`Model::call`: realized \
         outputs; a call with shapes seen before launches the compiled \
         kernels only). Inputs: {}.",
        doc_inputs.join(", ")
    );
    // One output is returned as it is, several as a tuple.
    let (out_type, out_value) = if out_types.len() == 1 {
        (out_types[0].clone(), out_values[0].clone())
    } else {
        (quote!((#(#out_types,)*)), quote!((#(#out_values,)*)))
    };
    let struct_doc = format!(
        "The ONNX model `{relative}` (opset {}), typed by `onnx!`.",
        model.opset
    );
    Ok(quote! {
        #[doc = #struct_doc]
        pub struct #name {
            model: ::morok_onnx::Model,
        }

        impl #name {
            #[doc = #load_doc]
            pub fn load() -> ::morok_onnx::Result<Self> {
                let model = { #load_body }?;
                Ok(#name { model })
            }

            /// The untyped model.
            pub fn model(&self) -> &::morok_onnx::Model {
                &self.model
            }

            #[doc = #forward_doc]
            #[track_caller]
            pub fn forward(&self, #(#params),*) -> ::morok_onnx::Result<#out_type> {
                let outputs = self.model.call(&[#(#feeds),*])?;
                let mut outputs = outputs.into_iter();
                let value = #out_value;
                Ok(value)
            }
        }
    })
}
