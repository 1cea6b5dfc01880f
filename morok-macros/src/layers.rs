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

/// A layer with the tokens of its field declaration (`fc1: Linear(64 ->
/// 128)`), so a width error can point at the declaration as well as at
/// the use.
#[derive(Clone, Debug)]
pub struct DeclaredLayer {
    /// The layer.
    pub spec: LayerSpec,
    /// The field's declaration, for error spans.
    pub decl: TokenStream,
}

/// Why a layer refuses its input.
pub struct LayerError {
    /// The message at the use.
    pub message: String,
    /// Whether the input's width disagrees with the declared width, so
    /// the declaration is reported too (either may be the mistake).
    pub width: bool,
}

impl std::fmt::Display for LayerSpec {
    /// The declaration as written in `model!`: `Linear(64 -> 10)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayerSpec::Linear { inp, out, bias } => {
                write!(f, "Linear({inp} -> {out}")?;
                if !bias {
                    write!(f, ", bias = false")?;
                }
                write!(f, ")")
            }
            LayerSpec::Conv2d {
                inp,
                out,
                kernel,
                stride,
                padding,
            } => write!(
                f,
                "Conv2d({inp} -> {out}, kernel = {kernel}, stride = {stride}, padding = {padding})"
            ),
            LayerSpec::LayerNorm(n) => write!(f, "LayerNorm({n})"),
            LayerSpec::Embedding { vocab, dim } => write!(f, "Embedding({vocab} -> {dim})"),
            LayerSpec::Param(dims) => write!(f, "Param{dims:?}"),
        }
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

    /// The output dtype and shape for an input, or why the input does not
    /// fit. Messages speak the DSL's shapes (`[.., 64]`), not the weight
    /// layout behind them.
    pub fn output(
        &self,
        name: &str,
        dt: ScalarType,
        x: &[SymDim],
    ) -> std::result::Result<(ScalarType, Vec<SymDim>), LayerError> {
        let lit = |n: usize| SymDim::from(n);
        let use_error = |message: String| LayerError {
            message,
            width: false,
        };
        let expects = |want: String, why: Option<String>| LayerError {
            message: format!(
                "layer `{name}` ({self}) expects {want} but gets {}{}",
                shape::shape_text(x),
                why.map(|w| format!(": {w}")).unwrap_or_default()
            ),
            width: true,
        };
        let float_input = || {
            if dt == ScalarType::F32 {
                Ok(())
            } else {
                Err(use_error(format!(
                    "layer `{name}` expects f32 input but gets {dt} (add a `.cast(f32)`)"
                )))
            }
        };
        let out = match self {
            LayerSpec::Embedding { dim, .. } => {
                if !dt.is_int() {
                    return Err(use_error(format!(
                        "layer `{name}` expects integer indices but gets {dt}"
                    )));
                }
                let mut out = x.to_vec();
                out.push(lit(*dim));
                out
            }
            LayerSpec::Linear { inp, out, bias } => {
                float_input()?;
                let b = [lit(*out)];
                shape::linear_shape(x, &[lit(*out), lit(*inp)], bias.then_some(&b[..]))
                    .map_err(|_| expects(format!("[.., {inp}]"), None))?
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
                    padding: (*padding, *padding).into(),
                    dilation: (1, 1),
                    groups: 1,
                };
                if x.len() != 4 || x[1] != lit(*inp) {
                    return Err(expects(format!("[N, {inp}, H, W]"), None));
                }
                let w = [lit(*out), lit(*inp), lit(*kernel), lit(*kernel)];
                shape::conv2d_shape(x, &w, Some(&[lit(*out)]), g)
                    .map_err(|e| expects(format!("[N, {inp}, H, W]"), Some(e.to_string())))?
                    .to_vec()
            }
            LayerSpec::LayerNorm(n) => {
                float_input()?;
                if x.last() != Some(&lit(*n)) {
                    return Err(expects(format!("[.., {n}]"), None));
                }
                x.to_vec()
            }
            LayerSpec::Param(_) => {
                return Err(use_error(format!(
                    "`{name}` is a parameter, not a layer: use it by name"
                )))
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
