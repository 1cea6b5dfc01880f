//! The layer kinds of `model!`: their syntax, parameters and shape rules.

use morok_core::shape::{self, ConvGeometry, SymDim};
use morok_core::ScalarType;
use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::ParseStream;
use syn::{Error, Ident, LitInt, Result, Token};

/// A layer declared in a `model!` struct.
#[derive(Clone, Debug)]
pub enum LayerSpec {
    /// `Linear(in -> out)`, optionally `, bias = false`.
    Linear {
        /// Input features.
        inp: usize,
        /// Output features.
        out: usize,
        /// Whether it has a bias.
        bias: bool,
    },
    /// `Conv2d(in -> out, kernel = k, stride = s, padding = p)`.
    Conv2d {
        /// Input channels.
        inp: usize,
        /// Output channels.
        out: usize,
        /// Square kernel size.
        kernel: usize,
        /// Stride.
        stride: usize,
        /// Zero padding on every side.
        padding: usize,
    },
    /// `LayerNorm(n)` over the last axis.
    LayerNorm(usize),
    /// `Embedding(vocab -> dim)`.
    Embedding {
        /// Number of rows.
        vocab: usize,
        /// Row width.
        dim: usize,
    },
    /// `Param[dims]`: a raw parameter used by name.
    Param(Vec<usize>),
}

fn usize_lit(input: ParseStream) -> Result<usize> {
    input.parse::<LitInt>()?.base10_parse()
}

fn arrow_pair(input: ParseStream) -> Result<(usize, usize)> {
    let a = usize_lit(input)?;
    input.parse::<Token![->]>()?;
    Ok((a, usize_lit(input)?))
}

/// `, key = value` options of a layer: `(key, value)` pairs.
fn options(input: ParseStream, allowed: &[&str]) -> Result<Vec<(String, syn::Lit)>> {
    let mut out = Vec::new();
    while input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        let key: Ident = input.parse()?;
        if !allowed.contains(&key.to_string().as_str()) {
            return Err(Error::new(
                key.span(),
                format!("unknown option `{key}` (expected {})", allowed.join(", ")),
            ));
        }
        input.parse::<Token![=]>()?;
        out.push((key.to_string(), input.parse()?));
    }
    Ok(out)
}

fn opt_usize(opts: &[(String, syn::Lit)], key: &str, default: usize) -> Result<usize> {
    match opts.iter().find(|(k, _)| k == key) {
        Some((_, syn::Lit::Int(i))) => i.base10_parse(),
        Some((_, other)) => Err(Error::new_spanned(
            other,
            format!("`{key}` must be an integer literal"),
        )),
        None => Ok(default),
    }
}

/// The kinds, for "unknown layer kind" errors.
pub const KINDS: &str = "Linear, Conv2d, LayerNorm, Embedding, Param";

impl LayerSpec {
    /// Parses a layer after the field's `:`.
    pub fn parse(input: ParseStream) -> Result<LayerSpec> {
        let kind: Ident = input.parse()?;
        if kind == "Param" {
            let content;
            syn::bracketed!(content in input);
            let dims = content.parse_terminated(LitInt::parse, Token![,])?;
            return Ok(LayerSpec::Param(
                dims.iter()
                    .map(|d| d.base10_parse())
                    .collect::<Result<_>>()?,
            ));
        }
        let content;
        syn::parenthesized!(content in input);
        let layer = match kind.to_string().as_str() {
            "Linear" => {
                let (inp, out) = arrow_pair(&content)?;
                let opts = options(&content, &["bias"])?;
                let bias = match opts.first() {
                    Some((_, syn::Lit::Bool(b))) => b.value,
                    Some((_, other)) => {
                        return Err(Error::new_spanned(
                            other,
                            "`bias` must be `true` or `false`",
                        ))
                    }
                    None => true,
                };
                LayerSpec::Linear { inp, out, bias }
            }
            "Conv2d" => {
                let (inp, out) = arrow_pair(&content)?;
                let opts = options(&content, &["kernel", "stride", "padding"])?;
                if !opts.iter().any(|(k, _)| k == "kernel") {
                    return Err(Error::new(kind.span(), "Conv2d needs `kernel = k`"));
                }
                LayerSpec::Conv2d {
                    inp,
                    out,
                    kernel: opt_usize(&opts, "kernel", 1)?,
                    stride: opt_usize(&opts, "stride", 1)?,
                    padding: opt_usize(&opts, "padding", 0)?,
                }
            }
            "LayerNorm" => LayerSpec::LayerNorm(usize_lit(&content)?),
            "Embedding" => {
                let (vocab, dim) = arrow_pair(&content)?;
                LayerSpec::Embedding { vocab, dim }
            }
            other => {
                return Err(Error::new(
                    kind.span(),
                    format!("unknown layer kind `{other}` (expected one of {KINDS})"),
                ))
            }
        };
        if !content.is_empty() {
            return Err(content.error("unexpected tokens in the layer"));
        }
        Ok(layer)
    }

    /// The output dtype and shape for an input, or the error message.
    pub fn output(
        &self,
        name: &str,
        dt: ScalarType,
        x: &[SymDim],
    ) -> std::result::Result<(ScalarType, Vec<SymDim>), String> {
        let lit = |n: usize| SymDim::from(n);
        let expects = |want: String| {
            format!(
                "layer `{name}` expects {want} but gets {}",
                shape::shape_text(x)
            )
        };
        let float_input = || {
            if dt == ScalarType::F32 {
                Ok(())
            } else {
                Err(format!(
                    "layer `{name}` expects f32 input but gets {dt} (add a `.cast(f32)`)"
                ))
            }
        };
        let out = match self {
            LayerSpec::Embedding { dim, .. } => {
                if !dt.is_int() {
                    return Err(format!(
                        "layer `{name}` expects integer indices but gets {dt}"
                    ));
                }
                let mut out = x.to_vec();
                out.push(lit(*dim));
                out
            }
            LayerSpec::Linear { inp, out, bias } => {
                float_input()?;
                let b = [lit(*out)];
                shape::linear_shape(x, &[lit(*out), lit(*inp)], bias.then_some(&b[..]))
                    .map_err(|e| format!("{}: {e}", expects(format!("[.., {inp}]"))))?
                    .to_vec()
            }
            LayerSpec::Conv2d {
                inp,
                out,
                kernel,
                stride,
                padding,
            } => {
                float_input()?;
                let g = ConvGeometry {
                    stride: (*stride, *stride),
                    padding: (*padding, *padding),
                    dilation: (1, 1),
                    groups: 1,
                };
                let w = [lit(*out), lit(*inp), lit(*kernel), lit(*kernel)];
                shape::conv2d_shape(x, &w, Some(&[lit(*out)]), g)
                    .map_err(|e| format!("{}: {e}", expects(format!("[N, {inp}, H, W]"))))?
                    .to_vec()
            }
            LayerSpec::LayerNorm(n) => {
                float_input()?;
                if x.last() != Some(&lit(*n)) {
                    return Err(expects(format!("[.., {n}]")));
                }
                x.to_vec()
            }
            LayerSpec::Param(_) => {
                return Err(format!(
                    "`{name}` is a parameter, not a layer: use it by name"
                ))
            }
        };
        Ok((ScalarType::F32, out))
    }

    /// The runtime type of the field.
    pub fn field_type(&self) -> TokenStream {
        match self {
            LayerSpec::Linear { .. } => quote!(::morok::dsl::layers::Linear),
            LayerSpec::Conv2d { .. } => quote!(::morok::dsl::layers::Conv2d),
            LayerSpec::LayerNorm(_) => quote!(::morok::dsl::layers::LayerNorm),
            LayerSpec::Embedding { .. } => quote!(::morok::dsl::layers::Embedding),
            LayerSpec::Param(_) => quote!(::morok::dsl::layers::Param),
        }
    }

    /// The configuration arguments of the runtime type's `init`/`load`.
    pub fn args(&self) -> TokenStream {
        match self {
            LayerSpec::Linear { inp, out, bias } => quote!(#inp, #out, #bias),
            LayerSpec::Conv2d {
                inp,
                out,
                kernel,
                stride,
                padding,
            } => quote!(#inp, #out, #kernel, #stride, #padding),
            LayerSpec::LayerNorm(n) => quote!(#n),
            LayerSpec::Embedding { vocab, dim } => quote!(#vocab, #dim),
            LayerSpec::Param(dims) => quote!(&[#(#dims),*]),
        }
    }
}

use syn::parse::Parse;
