//! The layer kinds of `model!`: their syntax, parameters and shape rules.

use morok_core::shape::{self, ConvNd, SymDim};
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
    Conv2d(ConvLayer),
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
    /// `Conv1d(in -> out, kernel = k, stride = s, padding = p)`.
    Conv1d(ConvLayer),
    /// `BatchNorm2d(channels)`.
    BatchNorm2d(usize),
    /// `GroupNorm(groups, channels)`.
    GroupNorm {
        /// Channel groups.
        groups: usize,
        /// Channels.
        channels: usize,
    },
    /// `Dropout(p)`.
    Dropout(f64),
    /// `MultiheadAttention(embed, heads = h)`, optionally `, causal =
    /// true`: self-attention of `[B, L, embed]`.
    MultiheadAttention {
        /// Width.
        embed: usize,
        /// Heads.
        heads: usize,
        /// Causal masking.
        causal: bool,
    },
    /// `Relu`, `Gelu`, `Tanh`, `Sigmoid` or `Silu` (in a `Sequential`).
    Activation(Ident),
    /// `Sequential(layer, ...)`: the layers and activations in order.
    Sequential(Vec<LayerSpec>),
}

/// A convolution layer's declaration (`Conv1d`, `Conv2d`: the kernel is
/// square).
#[derive(Clone, Debug)]
pub struct ConvLayer {
    /// Input channels.
    pub inp: usize,
    /// Output channels.
    pub out: usize,
    /// Kernel size.
    pub kernel: usize,
    /// Stride.
    pub stride: usize,
    /// Zero padding on every side.
    pub padding: usize,
}

impl ConvLayer {
    /// `in -> out, kernel = k (, stride = s)? (, padding = p)?` of a
    /// `kind` layer.
    fn parse(content: ParseStream, kind: &Ident) -> Result<ConvLayer> {
        let (inp, out) = arrow_pair(content)?;
        let opts = options(content, &["kernel", "stride", "padding"])?;
        if !opts.iter().any(|(k, _)| k == "kernel") {
            return Err(Error::new(
                kind.span(),
                format!("{kind} needs `kernel = k`"),
            ));
        }
        Ok(ConvLayer {
            inp,
            out,
            kernel: opt_usize(&opts, "kernel", 1)?,
            stride: opt_usize(&opts, "stride", 1)?,
            padding: opt_usize(&opts, "padding", 0)?,
        })
    }

    /// The run-time constructor's configuration arguments.
    fn args(&self) -> TokenStream {
        let (i, o, k, s, p) = (self.inp, self.out, self.kernel, self.stride, self.padding);
        quote!(#i, #o, #k, #s, #p)
    }
}

impl std::fmt::Display for ConvLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} -> {}, kernel = {}, stride = {}, padding = {}",
            self.inp, self.out, self.kernel, self.stride, self.padding
        )
    }
}

/// The activations a `Sequential` block may list.
const ACTIVATIONS: [&str; 5] = ["Relu", "Gelu", "Tanh", "Sigmoid", "Silu"];

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

fn opt_bool(opts: &[(String, syn::Lit)], key: &str, default: bool) -> Result<bool> {
    match opts.iter().find(|(k, _)| k == key) {
        Some((_, syn::Lit::Bool(b))) => Ok(b.value),
        Some((_, other)) => Err(Error::new_spanned(
            other,
            format!("`{key}` must be `true` or `false`"),
        )),
        None => Ok(default),
    }
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
            LayerSpec::Conv2d(c) => write!(f, "Conv2d({c})"),
            LayerSpec::LayerNorm(n) => write!(f, "LayerNorm({n})"),
            LayerSpec::Embedding { vocab, dim } => write!(f, "Embedding({vocab} -> {dim})"),
            LayerSpec::Param(dims) => write!(f, "Param{dims:?}"),
            LayerSpec::Conv1d(c) => write!(f, "Conv1d({c})"),
            LayerSpec::BatchNorm2d(c) => write!(f, "BatchNorm2d({c})"),
            LayerSpec::GroupNorm { groups, channels } => {
                write!(f, "GroupNorm({groups}, {channels})")
            }
            LayerSpec::Dropout(p) => write!(f, "Dropout({p})"),
            LayerSpec::MultiheadAttention {
                embed,
                heads,
                causal,
            } => {
                write!(f, "MultiheadAttention({embed}, heads = {heads}")?;
                if *causal {
                    write!(f, ", causal = true")?;
                }
                write!(f, ")")
            }
            LayerSpec::Activation(a) => write!(f, "{a}"),
            LayerSpec::Sequential(list) => {
                let parts: Vec<String> = list.iter().map(|l| l.to_string()).collect();
                write!(f, "Sequential({})", parts.join(", "))
            }
        }
    }
}

/// The kinds, for "unknown layer kind" errors.
pub const KINDS: &str = "Linear, Conv1d, Conv2d, LayerNorm, BatchNorm2d, GroupNorm, Embedding, \
                         Dropout, MultiheadAttention, Sequential, Param";

impl LayerSpec {
    /// Parses a layer after the field's `:`.
    pub fn parse(input: ParseStream) -> Result<LayerSpec> {
        let kind: Ident = input.parse()?;
        if ACTIVATIONS.contains(&kind.to_string().as_str()) {
            return Ok(LayerSpec::Activation(kind));
        }
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
            "Conv2d" => LayerSpec::Conv2d(ConvLayer::parse(&content, &kind)?),
            "Conv1d" => LayerSpec::Conv1d(ConvLayer::parse(&content, &kind)?),
            "BatchNorm2d" => LayerSpec::BatchNorm2d(usize_lit(&content)?),
            "GroupNorm" => {
                let groups = usize_lit(&content)?;
                content.parse::<Token![,]>()?;
                let channels = usize_lit(&content)?;
                if groups == 0 || channels % groups != 0 {
                    return Err(Error::new(
                        kind.span(),
                        format!("GroupNorm: {channels} channels do not split into {groups} groups"),
                    ));
                }
                LayerSpec::GroupNorm { groups, channels }
            }
            "Dropout" => {
                let p: syn::LitFloat = content.parse()?;
                let v: f64 = p.base10_parse()?;
                if !(0.0..=1.0).contains(&v) {
                    return Err(Error::new(
                        p.span(),
                        format!("Dropout: p = {v} is outside [0, 1]"),
                    ));
                }
                LayerSpec::Dropout(v)
            }
            "MultiheadAttention" => {
                let embed = usize_lit(&content)?;
                let opts = options(&content, &["heads", "causal"])?;
                let heads = opt_usize(&opts, "heads", 0)?;
                if heads == 0 || embed % heads != 0 {
                    return Err(Error::new(
                        kind.span(),
                        format!("MultiheadAttention needs `heads = h` dividing the width {embed}"),
                    ));
                }
                LayerSpec::MultiheadAttention {
                    embed,
                    heads,
                    causal: opt_bool(&opts, "causal", false)?,
                }
            }
            "Sequential" => {
                let list = content.parse_terminated(LayerSpec::parse, Token![,])?;
                if let Some(p) = list.iter().find(|l| matches!(l, LayerSpec::Param(_))) {
                    return Err(Error::new(
                        kind.span(),
                        format!("a Sequential block holds layers, not `{p}`"),
                    ));
                }
                LayerSpec::Sequential(list.into_iter().collect())
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
            LayerSpec::Conv1d(c) | LayerSpec::Conv2d(c) => {
                float_input()?;
                let rank = if matches!(self, LayerSpec::Conv1d(_)) {
                    1
                } else {
                    2
                };
                let inp = c.inp;
                let want = if rank == 1 {
                    format!("[N, {inp}, L]")
                } else {
                    format!("[N, {inp}, H, W]")
                };
                if x.len() != rank + 2 || x[1] != lit(inp) {
                    return Err(expects(want, None));
                }
                let p = c.padding.min(isize::MAX as usize) as isize;
                let g = ConvNd {
                    stride: vec![c.stride; rank],
                    padding: vec![(p, p); rank],
                    output_padding: vec![0; rank],
                    dilation: vec![1; rank],
                    groups: 1,
                };
                let mut w = vec![lit(c.out), lit(inp)];
                w.extend(vec![lit(c.kernel); rank]);
                let op = format!("conv{rank}d");
                shape::conv_nd_shape(&op, x, &w, Some(&[lit(c.out)]), &g)
                    .map_err(|e| expects(want, Some(e.to_string())))?
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
            LayerSpec::BatchNorm2d(c) => {
                float_input()?;
                if x.len() != 4 || x[1] != lit(*c) {
                    return Err(expects(format!("[N, {c}, H, W]"), None));
                }
                x.to_vec()
            }
            LayerSpec::GroupNorm { channels, .. } => {
                float_input()?;
                if x.len() < 2 || x[1] != lit(*channels) {
                    return Err(expects(format!("[N, {channels}, ..]"), None));
                }
                x.to_vec()
            }
            LayerSpec::MultiheadAttention { embed, .. } => {
                float_input()?;
                if x.len() != 3 || x[2] != lit(*embed) {
                    return Err(expects(format!("[B, L, {embed}]"), None));
                }
                x.to_vec()
            }
            LayerSpec::Dropout(_) | LayerSpec::Activation(_) => {
                float_input()?;
                x.to_vec()
            }
            LayerSpec::Sequential(list) => {
                let mut shape = x.to_vec();
                for (i, l) in list.iter().enumerate() {
                    shape = l.output(&format!("{name}.{i}"), ScalarType::F32, &shape)?.1;
                }
                if list.is_empty() {
                    float_input()?;
                }
                shape
            }
        };
        Ok((ScalarType::F32, out))
    }

    /// The runtime type of the field.
    pub fn field_type(&self) -> TokenStream {
        match self {
            LayerSpec::Linear { .. } => quote!(::morok::dsl::layers::Linear),
            LayerSpec::Conv2d(_) => quote!(::morok::dsl::layers::Conv2d),
            LayerSpec::LayerNorm(_) => quote!(::morok::dsl::layers::LayerNorm),
            LayerSpec::Embedding { .. } => quote!(::morok::dsl::layers::Embedding),
            LayerSpec::Param(_) => quote!(::morok::dsl::layers::Param),
            LayerSpec::Conv1d(_) => quote!(::morok::dsl::layers::Conv1d),
            LayerSpec::BatchNorm2d(_) => quote!(::morok::nn::BatchNorm2d),
            LayerSpec::GroupNorm { .. } => quote!(::morok::nn::GroupNorm),
            LayerSpec::Dropout(_) => quote!(::morok::nn::Dropout),
            LayerSpec::MultiheadAttention { .. } => quote!(::morok::dsl::layers::SelfAttention),
            LayerSpec::Activation(_) | LayerSpec::Sequential(_) => {
                quote!(::morok::dsl::layers::Sequential)
            }
        }
    }

    /// The configuration arguments of the runtime type's `init`/`load`.
    pub fn args(&self) -> TokenStream {
        match self {
            LayerSpec::Linear { inp, out, bias } => quote!(#inp, #out, #bias),
            LayerSpec::Conv2d(conv) => conv.args(),
            LayerSpec::LayerNorm(n) => quote!(#n),
            LayerSpec::Embedding { vocab, dim } => quote!(#vocab, #dim),
            LayerSpec::Param(dims) => quote!(&[#(#dims),*]),
            LayerSpec::Conv1d(conv) => conv.args(),
            LayerSpec::BatchNorm2d(c) => quote!(#c),
            LayerSpec::GroupNorm { groups, channels } => quote!(#groups, #channels),
            LayerSpec::Dropout(p) => quote!(#p),
            LayerSpec::MultiheadAttention {
                embed,
                heads,
                causal,
            } => quote!(#embed, #heads, #causal),
            LayerSpec::Activation(_) => {
                let one = self.config();
                quote!(&[#one])
            }
            LayerSpec::Sequential(list) => {
                let items = list.iter().map(LayerSpec::config);
                quote!(&[#(#items),*])
            }
        }
    }

    /// The run-time description of the layer as an entry of a
    /// `Sequential` block (`BlockConfig`).
    fn config(&self) -> TokenStream {
        let c = quote!(::morok::dsl::layers::BlockConfig);
        match self {
            LayerSpec::Linear { inp, out, bias } => quote!(#c::Linear(#inp, #out, #bias)),
            LayerSpec::Conv1d(conv) => {
                let a = conv.args();
                quote!(#c::Conv1d(#a))
            }
            LayerSpec::Conv2d(conv) => {
                let a = conv.args();
                quote!(#c::Conv2d(#a))
            }
            LayerSpec::LayerNorm(n) => quote!(#c::LayerNorm(#n)),
            LayerSpec::Embedding { vocab, dim } => quote!(#c::Embedding(#vocab, #dim)),
            LayerSpec::BatchNorm2d(n) => quote!(#c::BatchNorm2d(#n)),
            LayerSpec::GroupNorm { groups, channels } => quote!(#c::GroupNorm(#groups, #channels)),
            LayerSpec::Dropout(p) => quote!(#c::Dropout(#p)),
            LayerSpec::MultiheadAttention {
                embed,
                heads,
                causal,
            } => quote!(#c::SelfAttention(#embed, #heads, #causal)),
            LayerSpec::Activation(a) => {
                quote!(#c::Activation(::morok::dsl::layers::Activation::#a))
            }
            LayerSpec::Sequential(list) => {
                let items = list.iter().map(LayerSpec::config);
                quote!(#c::Sequential(::std::vec![#(#items),*]))
            }
            // A `Sequential` never holds a `Param` (its parse refuses it).
            LayerSpec::Param(_) => {
                quote!(::core::compile_error!(
                    "a Sequential block holds layers, not parameters"
                ))
            }
        }
    }
}

use syn::parse::Parse;
