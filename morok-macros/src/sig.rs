//! Signatures: a parameter's dtype and dims, written `Tensor<f32, B, 64>`
//! in a `#[morok::kernel]` fn and `f32[B, 64]` inside `kernel!`/`model!`.

use morok_core::shape::SymDim;
use morok_core::ScalarType;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::ParseStream;
use syn::{Error, Ident, Result, Token};

/// One dim of a signature.
#[derive(Clone)]
pub enum DimSpec {
    /// An integer literal.
    Lit(usize),
    /// A name (`B`), equal only to itself.
    Name(String, Span),
}

impl DimSpec {
    /// The dim as a symbolic value.
    pub fn sym(&self) -> SymDim {
        match self {
            DimSpec::Lit(n) => SymDim::from(*n),
            DimSpec::Name(n, _) => SymDim::name(n),
        }
    }
}

/// A declared tensor type: element type and dims.
#[derive(Clone)]
pub struct TensorType {
    /// The element type.
    pub dtype: ScalarType,
    /// The dims (empty for a scalar).
    pub dims: Vec<DimSpec>,
}

impl TensorType {
    /// The dims as symbolic values.
    pub fn shape(&self) -> Vec<SymDim> {
        self.dims.iter().map(DimSpec::sym).collect()
    }
}

/// A tensor parameter.
#[derive(Clone)]
pub struct Param {
    /// Its name.
    pub name: Ident,
    /// Its declared type.
    pub ty: TensorType,
}

/// The element type named `ident` (`f32`, `i64`, `bool`, ...).
pub fn dtype_named(ident: &Ident) -> Result<ScalarType> {
    let name = ident.to_string();
    ScalarType::ALL_DATA
        .into_iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| {
            let all: Vec<&str> = ScalarType::ALL_DATA.iter().map(|t| t.name()).collect();
            Error::new(
                ident.span(),
                format!(
                    "unknown element type `{name}` (expected one of {})",
                    all.join(", ")
                ),
            )
        })
}

/// The tokens of `morok::ScalarType::X` for `t`.
pub fn dtype_tokens(t: ScalarType) -> TokenStream {
    let v = Ident::new(&format!("{t:?}"), Span::call_site());
    quote!(::morok::ScalarType::#v)
}

fn dim_from_expr(e: &syn::Expr) -> Result<DimSpec> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => Ok(DimSpec::Lit(i.base10_parse()?)),
        syn::Expr::Path(p) if p.path.get_ident().is_some() => {
            let id = p.path.get_ident().expect("checked above");
            Ok(DimSpec::Name(id.to_string(), id.span()))
        }
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => dim_from_expr(e),
            _ => Err(Error::new_spanned(
                e,
                "a dim is an integer literal or a name",
            )),
        },
        _ => Err(Error::new_spanned(
            e,
            "a dim is an integer literal or a name",
        )),
    }
}

/// Parses `Tensor<f32, B, 64>` (the type of a `#[morok::kernel]` argument
/// or result).
pub fn tensor_type_from_rust(ty: &syn::Type) -> Result<TensorType> {
    let bad = || {
        Error::new_spanned(
            ty,
            "expected `Tensor<dtype, dims...>`, such as `Tensor<f32, B, 64>`",
        )
    };
    let syn::Type::Path(p) = ty else {
        return Err(bad());
    };
    let seg = p.path.segments.last().ok_or_else(bad)?;
    if seg.ident != "Tensor" {
        return Err(bad());
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return Err(bad());
    };
    let mut it = args.args.iter();
    let dtype = match it.next() {
        Some(syn::GenericArgument::Type(syn::Type::Path(t))) if t.path.get_ident().is_some() => {
            dtype_named(t.path.get_ident().expect("checked above"))?
        }
        _ => return Err(bad()),
    };
    let mut dims = Vec::new();
    for a in it {
        dims.push(match a {
            syn::GenericArgument::Type(syn::Type::Path(t)) if t.path.get_ident().is_some() => {
                let id = t.path.get_ident().expect("checked above");
                DimSpec::Name(id.to_string(), id.span())
            }
            syn::GenericArgument::Const(e) => dim_from_expr(e)?,
            other => {
                return Err(Error::new_spanned(
                    other,
                    "a dim is an integer literal or a name",
                ))
            }
        });
    }
    Ok(TensorType { dtype, dims })
}

/// Parses `f32[B, 64]` (or `f32` for a scalar).
pub fn parse_tensor_type(input: ParseStream) -> Result<TensorType> {
    let dt: Ident = input.parse()?;
    let dtype = dtype_named(&dt)?;
    let mut dims = Vec::new();
    if input.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in input);
        let list = content.parse_terminated(syn::Expr::parse, Token![,])?;
        for e in &list {
            dims.push(dim_from_expr(e)?);
        }
    }
    Ok(TensorType { dtype, dims })
}

use syn::parse::Parse;

/// Parses `name: f32[B, 64]`.
pub fn parse_param(input: ParseStream) -> Result<Param> {
    let name: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    let ty = parse_tensor_type(input)?;
    Ok(Param { name, ty })
}
