//! The literal forms of the convolution and pooling options in a kernel
//! body: `ConvOptions { stride: (2, 2), padding: (1, 1),
//! ..Default::default() }` and `PoolOptions::new((2, 2)).stride((1, 1))`
//! with the builder calls of the `Tensor` API. Each gives the shape rules'
//! geometry and the tokens of the value the op node passes at run time.

use super::{count_lit, int_lit};
use morok_core::shape::{ConvGeometry, ConvNd, InterpolateMode, Pads, PoolGeometry, Slice};
use morok_core::tensor_ops::ScatterReduce;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Error, Expr, Result};

/// A tuple of `n` non-negative integer literals (`(2, 2)`).
fn usize_tuple(e: &Expr, n: usize, what: &str) -> Result<Vec<usize>> {
    match e {
        Expr::Tuple(t) if t.elems.len() == n => {
            t.elems.iter().map(|x| count_lit(x, what)).collect()
        }
        Expr::Paren(p) => usize_tuple(&p.expr, n, what),
        _ => {
            let example = vec!["2"; n].join(", ");
            Err(Error::new_spanned(
                e,
                format!("{what} must be a tuple of {n} integer literals such as `({example})`"),
            ))
        }
    }
}

/// `(a, b)` of two non-negative integer literals.
fn usize_pair(e: &Expr, what: &str) -> Result<(usize, usize)> {
    let v = usize_tuple(e, 2, what)?;
    Ok((v[0], v[1]))
}

/// A padding of `n` axes: `1` (every side), `(1, 2)` (both sides of each
/// axis, PyTorch's), or `(before, after)` pairs `[(1, 0), (0, 1)]`,
/// optionally as `Pads([...])`.
fn padding(e: &Expr, n: usize) -> Result<Vec<(isize, isize)>> {
    let wrong = || {
        Error::new_spanned(
            e,
            "padding must be `1`, `(1, 2)` or `(before, after)` pairs such as \
             `Pads([(1, 0), (0, 1)])`, one per axis",
        )
    };
    let side = |x: &Expr| Ok::<_, Error>(int_lit(x, "padding")? as isize);
    match e {
        Expr::Lit(_) => Ok(vec![(side(e)?, side(e)?); n]),
        Expr::Tuple(_) | Expr::Paren(_) => Ok(usize_tuple(e, n, "padding")?
            .into_iter()
            .map(|p| (p as isize, p as isize))
            .collect()),
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Pads") => {
                padding(&c.args[0], n)
            }
            _ => Err(wrong()),
        },
        Expr::Array(a) if a.elems.len() == n => a
            .elems
            .iter()
            .map(|p| match p {
                Expr::Tuple(t) if t.elems.len() == 2 => {
                    Ok((side(&t.elems[0])?, side(&t.elems[1])?))
                }
                _ => Err(wrong()),
            })
            .collect(),
        _ => Err(wrong()),
    }
}

/// `::morok::Pads([(a, b), ...])`.
fn pads_tokens(p: &[(isize, isize)]) -> TokenStream {
    let pairs = p.iter().map(|(a, b)| quote!((#a, #b)));
    quote!(::morok::Pads([#(#pairs),*]))
}

/// `(a, b, ...)` of integer literals.
fn tuple_tokens(v: &[usize]) -> TokenStream {
    quote!((#(#v),*))
}

/// Whether `e` is `Default::default()` or `<name>::default()`.
fn is_default(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Call(c) if c.args.is_empty() => match &*c.func {
            Expr::Path(p) => {
                let s: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                s == ["Default", "default"] || s == [name, "default"]
            }
            _ => false,
        },
        _ => false,
    }
}

/// `ConvOptions { .. }` or `ConvOptions::default()`.
pub(super) fn conv_options(e: &Expr) -> Result<(ConvGeometry, TokenStream)> {
    let form = "the options must be `ConvOptions { stride: (2, 2), padding: (1, 1), \
                dilation: (1, 1), groups: 1 }` (or a part of it and `..Default::default()`)";
    let mut g = ConvGeometry::default();
    if !is_default(e, "ConvOptions") {
        let Expr::Struct(s) = e else {
            return Err(Error::new_spanned(e, form));
        };
        if s.path
            .segments
            .last()
            .is_none_or(|p| p.ident != "ConvOptions")
        {
            return Err(Error::new_spanned(&s.path, form));
        }
        let mut seen = Vec::new();
        for f in &s.fields {
            let name = match &f.member {
                syn::Member::Named(n) => n.to_string(),
                syn::Member::Unnamed(_) => String::new(),
            };
            match name.as_str() {
                "stride" => g.stride = usize_pair(&f.expr, "stride")?,
                "dilation" => g.dilation = usize_pair(&f.expr, "dilation")?,
                "groups" => g.groups = count_lit(&f.expr, "groups")?,
                "padding" => {
                    let p = padding(&f.expr, 2)?;
                    g.padding = Pads([p[0], p[1]]);
                }
                _ => {
                    return Err(Error::new_spanned(
                        &f.member,
                        "ConvOptions has the fields stride, padding, dilation and groups",
                    ))
                }
            }
            seen.push(name);
        }
        match &s.rest {
            Some(rest) if !is_default(rest, "ConvOptions") => {
                return Err(Error::new_spanned(
                    rest,
                    "the rest of the options must be `..Default::default()`",
                ))
            }
            None if seen.len() < 4 => {
                return Err(Error::new_spanned(
                    e,
                    "ConvOptions needs stride, padding, dilation and groups, or \
                     `..Default::default()` for the rest",
                ))
            }
            _ => {}
        }
    }
    let ((s0, s1), (d0, d1), groups) = (g.stride, g.dilation, g.groups);
    let pads = pads_tokens(&g.padding.0);
    let tokens = quote!(::morok::ConvOptions {
        stride: (#s0, #s1),
        padding: #pads,
        dilation: (#d0, #d1),
        groups: #groups,
    });
    Ok((g, tokens))
}

/// The options struct of convolution `op` (other than `conv2d`): its
/// name, its number of axes, whether it has `output_padding`, and the
/// `Lit` variant that carries it.
fn conv_struct(op: &str) -> Option<(&'static str, usize, bool, &'static str)> {
    Some(match op {
        "conv1d" => ("Conv1dOptions", 1, false, "Conv1d"),
        "conv3d" => ("Conv3dOptions", 3, false, "Conv3d"),
        "conv_transpose1d" | "conv_transpose2d" => {
            ("ConvTransposeOptions", 2, true, "ConvTranspose")
        }
        "conv_transpose3d" => ("ConvTranspose3dOptions", 3, true, "ConvTranspose3d"),
        _ => return None,
    })
}

/// A size field of `n` axes: an integer for one axis (`Conv1dOptions`), a
/// tuple otherwise.
fn sizes(e: &Expr, n: usize, what: &str) -> Result<Vec<usize>> {
    if n == 1 {
        Ok(vec![count_lit(e, what)?])
    } else {
        usize_tuple(e, n, what)
    }
}

/// The tokens of a size field of `n` axes.
fn sizes_tokens(v: &[usize]) -> TokenStream {
    match v {
        [one] => quote!(#one),
        _ => tuple_tokens(v),
    }
}

/// The options literal of convolution `op` (`Conv1dOptions { stride: 2,
/// ..Default::default() }`, `Conv3dOptions`, `ConvTransposeOptions`,
/// `ConvTranspose3dOptions`): its geometry, the `Lit` variant and the
/// value's tokens.
pub(super) fn conv_nd_options(
    e: &Expr,
    op: &str,
) -> Result<(ConvNd, proc_macro2::Ident, TokenStream)> {
    let Some((name, n, transposed, variant)) = conv_struct(op) else {
        return Err(Error::new_spanned(
            e,
            format!("`{op}` takes no convolution options"),
        ));
    };
    let fields: &[&str] = if transposed {
        &["stride", "padding", "output_padding", "dilation", "groups"]
    } else {
        &["stride", "padding", "dilation", "groups"]
    };
    let form = format!(
        "the options of `{op}` must be `{name} {{ {} }}` (or a part of it and \
         `..Default::default()`)",
        fields
            .iter()
            .map(|f| format!("{f}: .."))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut g = ConvNd {
        stride: vec![1; n],
        padding: vec![(0, 0); n],
        output_padding: vec![0; n],
        dilation: vec![1; n],
        groups: 1,
    };
    if !is_default(e, name) {
        let Expr::Struct(s) = e else {
            return Err(Error::new_spanned(e, &form));
        };
        if s.path.segments.last().is_none_or(|p| p.ident != name) {
            return Err(Error::new_spanned(&s.path, &form));
        }
        let mut seen = 0;
        for f in &s.fields {
            let field = match &f.member {
                syn::Member::Named(id) => id.to_string(),
                syn::Member::Unnamed(_) => String::new(),
            };
            match field.as_str() {
                "stride" => g.stride = sizes(&f.expr, n, "stride")?,
                "dilation" => g.dilation = sizes(&f.expr, n, "dilation")?,
                "output_padding" if transposed => {
                    g.output_padding = sizes(&f.expr, n, "output_padding")?
                }
                "groups" => g.groups = count_lit(&f.expr, "groups")?,
                "padding" => g.padding = padding(&f.expr, n)?,
                _ => {
                    return Err(Error::new_spanned(
                        &f.member,
                        format!("{name} has the fields {}", fields.join(", ")),
                    ))
                }
            }
            seen += 1;
        }
        match &s.rest {
            Some(rest) if !is_default(rest, name) => {
                return Err(Error::new_spanned(
                    rest,
                    "the rest of the options must be `..Default::default()`",
                ))
            }
            None if seen < fields.len() => return Err(Error::new_spanned(e, &form)),
            _ => {}
        }
    }
    let (stride, dilation, groups) = (sizes_tokens(&g.stride), sizes_tokens(&g.dilation), g.groups);
    let pads = pads_tokens(&g.padding);
    let ty = quote::format_ident!("{}", name);
    let extra = if transposed {
        let o = sizes_tokens(&g.output_padding);
        quote!(output_padding: #o,)
    } else {
        quote!()
    };
    let tokens = quote!(::morok::#ty {
        stride: #stride,
        padding: #pads,
        #extra
        dilation: #dilation,
        groups: #groups,
    });
    Ok((g, quote::format_ident!("{}", variant), tokens))
}

/// `PoolOptions::new((2, 2))` (or `Pool3dOptions::new((2, 2, 2))`)
/// followed by the builder calls `stride`, `padding`, `dilation`,
/// `ceil_mode`, `count_include_pad` and `divisor_override`; `name` is the
/// options type the op takes.
pub(super) fn pool_options(e: &Expr, name: &str) -> Result<(PoolGeometry, TokenStream)> {
    let n = if name == "Pool3dOptions" { 3 } else { 2 };
    let kernel_example = vec!["2"; n].join(", ");
    let form = format!(
        "the options must be `{name}::new(({kernel_example}))`, optionally followed by \
         `.stride(..)`, `.padding(..)`, `.dilation(..)`, `.ceil_mode(true)`, \
         `.count_include_pad(false)`, `.divisor_override(4)`"
    );
    // The builder calls, outermost first, and the `new` at the bottom.
    let mut calls = Vec::new();
    let mut at = e;
    while let Expr::MethodCall(m) = at {
        calls.push(m);
        at = &m.receiver;
    }
    let kernel = match at {
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p)
                if p.path.segments.len() == 2
                    && p.path.segments[0].ident == name
                    && p.path.segments[1].ident == "new" =>
            {
                usize_tuple(&c.args[0], n, "the kernel")?
            }
            _ => return Err(Error::new_spanned(at, &form)),
        },
        _ => return Err(Error::new_spanned(at, &form)),
    };
    let mut g = PoolGeometry {
        stride: kernel.clone(),
        kernel,
        padding: vec![(0, 0); n],
        dilation: vec![1; n],
        ceil_mode: false,
        count_include_pad: true,
        divisor_override: None,
    };
    for m in calls.iter().rev() {
        let one = || -> Result<&Expr> {
            match m.args.len() {
                1 => Ok(&m.args[0]),
                _ => Err(Error::new_spanned(m, &form)),
            }
        };
        let flag = |x: &Expr, what: &str| match x {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Ok(b.value),
            _ => Err(Error::new_spanned(
                x,
                format!("{what} must be `true` or `false`"),
            )),
        };
        match m.method.to_string().as_str() {
            "stride" => g.stride = usize_tuple(one()?, n, "stride")?,
            "dilation" => g.dilation = usize_tuple(one()?, n, "dilation")?,
            "padding" => g.padding = padding(one()?, n)?,
            "ceil_mode" => g.ceil_mode = flag(one()?, "ceil_mode")?,
            "count_include_pad" => g.count_include_pad = flag(one()?, "count_include_pad")?,
            "divisor_override" => g.divisor_override = Some(count_lit(one()?, "divisor_override")?),
            _ => return Err(Error::new_spanned(&m.method, &form)),
        }
    }
    let (kernel, stride, dilation) = (
        tuple_tokens(&g.kernel),
        tuple_tokens(&g.stride),
        tuple_tokens(&g.dilation),
    );
    let pads = pads_tokens(&g.padding);
    let divisor = match g.divisor_override {
        Some(d) => quote!(::core::option::Option::Some(#d)),
        None => quote!(::core::option::Option::None),
    };
    let (ceil, include) = (g.ceil_mode, g.count_include_pad);
    let ty = quote::format_ident!("{}", name);
    let tokens = quote!(::morok::#ty {
        kernel: #kernel,
        stride: #stride,
        padding: #pads,
        dilation: #dilation,
        ceil_mode: #ceil,
        count_include_pad: #include,
        divisor_override: #divisor,
    });
    Ok((g, tokens))
}

/// One slice: a range of integer literals (`1..3`, `-2..`, `..`), or
/// `Slice::all()`, `Slice::range(a, b)`, `Slice::from(a)`, `Slice::to(b)`
/// with an optional `.step(k)`.
fn slice(e: &Expr) -> Result<Slice> {
    let form = "a slice must be a range such as `1..3`, `-2..` or `..`, or \
                `Slice::all()`, `Slice::range(a, b)`, `Slice::from(a)`, `Slice::to(b)` \
                with an optional `.step(k)`";
    let bound = |b: &Option<Box<Expr>>| -> Result<Option<isize>> {
        b.as_ref()
            .map(|x| Ok(int_lit(x, "a slice bound")? as isize))
            .transpose()
    };
    match e {
        Expr::Range(r) => {
            if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                return Err(Error::new_spanned(
                    e,
                    "a slice excludes its end: write `a..b`",
                ));
            }
            Ok(Slice {
                start: bound(&r.start)?,
                end: bound(&r.end)?,
                step: 1,
            })
        }
        Expr::MethodCall(m) if m.method == "step" && m.args.len() == 1 => {
            let step = int_lit(&m.args[0], "a slice step")? as isize;
            Ok(slice(&m.receiver)?.step(step))
        }
        Expr::Call(c) => {
            let Expr::Path(p) = &*c.func else {
                return Err(Error::new_spanned(e, form));
            };
            let names: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let arg = |i: usize| int_lit(&c.args[i], "a slice bound").map(|v| v as isize);
            let parts: Vec<&str> = names.iter().map(String::as_str).collect();
            match (parts.as_slice(), c.args.len()) {
                (["Slice", "all"], 0) => Ok(Slice::all()),
                (["Slice", "range"], 2) => Ok(Slice::range(arg(0)?, arg(1)?)),
                (["Slice", "from"], 1) => Ok(Slice::from(arg(0)?)),
                (["Slice", "to"], 1) => Ok(Slice::to(arg(0)?)),
                _ => Err(Error::new_spanned(e, form)),
            }
        }
        _ => Err(Error::new_spanned(e, form)),
    }
}

/// A list literal of slices (`[1..3, .., Slice::all().step(2)]`).
pub(super) fn slices(e: &Expr) -> Result<(Vec<Slice>, TokenStream)> {
    let Expr::Array(list) = e else {
        return Err(Error::new_spanned(
            e,
            "the slices must be a list literal such as `[1..3, ..]`",
        ));
    };
    let v = list.elems.iter().map(slice).collect::<Result<Vec<_>>>()?;
    let opt = |b: Option<isize>| match b {
        Some(x) => quote!(::core::option::Option::Some(#x)),
        None => quote!(::core::option::Option::None),
    };
    let toks = v.iter().map(|s| {
        let (start, end, step) = (opt(s.start), opt(s.end), s.step);
        quote!(::morok::Slice { start: #start, end: #end, step: #step })
    });
    let tokens = quote!(&[#(#toks),*]);
    Ok((v, tokens))
}

/// `InterpolateMode::Nearest` and the other modes.
pub(super) fn interpolate_mode(e: &Expr) -> Result<(InterpolateMode, TokenStream)> {
    let name = match e {
        Expr::Path(p)
            if p.path.segments.len() == 2 && p.path.segments[0].ident == "InterpolateMode" =>
        {
            p.path.segments[1].ident.to_string()
        }
        _ => String::new(),
    };
    let mode = match name.as_str() {
        "Nearest" => InterpolateMode::Nearest,
        "NearestExact" => InterpolateMode::NearestExact,
        "Linear" => InterpolateMode::Linear,
        "Bilinear" => InterpolateMode::Bilinear,
        "Trilinear" => InterpolateMode::Trilinear,
        _ => {
            return Err(Error::new_spanned(
                e,
                "the mode must be `InterpolateMode::Nearest`, `NearestExact`, `Linear`, \
                 `Bilinear` or `Trilinear`",
            ))
        }
    };
    let id = quote::format_ident!("{}", name);
    Ok((mode, quote!(::morok::InterpolateMode::#id)))
}

/// The fields of a struct literal `name { field: value, .. }` (or
/// `name::default()`, no fields) whose fields are among `fields`; a
/// missing field needs `..Default::default()`.
fn struct_fields<'e>(e: &'e Expr, name: &str, fields: &[&str]) -> Result<Vec<(String, &'e Expr)>> {
    if is_default(e, name) {
        return Ok(Vec::new());
    }
    let form = format!(
        "the options must be `{name} {{ {} }}` (or a part of it and `..Default::default()`)",
        fields
            .iter()
            .map(|f| format!("{f}: .."))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let Expr::Struct(s) = e else {
        return Err(Error::new_spanned(e, &form));
    };
    if s.path.segments.last().is_none_or(|p| p.ident != name) {
        return Err(Error::new_spanned(&s.path, &form));
    }
    let mut out = Vec::new();
    for f in &s.fields {
        let field = match &f.member {
            syn::Member::Named(id) => id.to_string(),
            syn::Member::Unnamed(_) => String::new(),
        };
        if !fields.contains(&field.as_str()) {
            return Err(Error::new_spanned(
                &f.member,
                format!("{name} has the fields {} here", fields.join(", ")),
            ));
        }
        out.push((field, &f.expr));
    }
    match &s.rest {
        Some(rest) if !is_default(rest, name) => Err(Error::new_spanned(
            rest,
            "the rest of the options must be `..Default::default()`",
        )),
        None if out.len() < fields.len() => Err(Error::new_spanned(e, &form)),
        _ => Ok(out),
    }
}

/// A number literal (`1e-5`, `-1.0`, `2`).
fn number(e: &Expr, what: &str) -> Result<f64> {
    match e {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => Ok(-number(&u.expr, what)?),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => Ok(i.base10_parse::<i64>()? as f64),
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be a number literal"),
        )),
    }
}

/// `true` or `false`.
fn flag(e: &Expr, what: &str) -> Result<bool> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Ok(b.value),
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be `true` or `false`"),
        )),
    }
}

/// `IsCloseOptions { rtol, atol, equal_nan }`: the value's tokens.
pub(super) fn isclose_options(e: &Expr) -> Result<TokenStream> {
    let (mut rtol, mut atol, mut equal_nan) = (1e-5, 1e-8, false);
    for (field, x) in struct_fields(e, "IsCloseOptions", &["rtol", "atol", "equal_nan"])? {
        match field.as_str() {
            "rtol" => rtol = number(x, "rtol")?,
            "atol" => atol = number(x, "atol")?,
            _ => equal_nan = flag(x, "equal_nan")?,
        }
    }
    Ok(quote!(::morok::IsCloseOptions { rtol: #rtol, atol: #atol, equal_nan: #equal_nan }))
}

/// `AttentionOptions { is_causal, scale, enable_gqa, dropout_p,
/// dropout_seed }` (no mask): `enable_gqa`, `dropout_p` and the value's
/// tokens.
pub(super) fn attention_options(e: &Expr) -> Result<(bool, f64, TokenStream)> {
    let fields = [
        "is_causal",
        "scale",
        "enable_gqa",
        "dropout_p",
        "dropout_seed",
    ];
    let (mut causal, mut scale, mut gqa, mut p, mut seed) = (false, None, false, 0.0, 0u64);
    for (field, x) in struct_fields(e, "AttentionOptions", &fields)? {
        match field.as_str() {
            "is_causal" => causal = flag(x, "is_causal")?,
            "enable_gqa" => gqa = flag(x, "enable_gqa")?,
            "dropout_p" => p = number(x, "dropout_p")?,
            "dropout_seed" => seed = count_lit(x, "dropout_seed")? as u64,
            _ => {
                scale = match x {
                    Expr::Path(n) if n.path.is_ident("None") => None,
                    Expr::Call(c)
                        if c.args.len() == 1
                            && matches!(&*c.func, Expr::Path(n) if n.path.is_ident("Some")) =>
                    {
                        Some(number(&c.args[0], "scale")?)
                    }
                    _ => {
                        return Err(Error::new_spanned(
                            x,
                            "scale must be `Some(0.125)` or `None`",
                        ))
                    }
                }
            }
        }
    }
    let scale_tokens = match scale {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let tokens = quote!(::morok::dsl::graph::AttentionLit {
        is_causal: #causal,
        scale: #scale_tokens,
        enable_gqa: #gqa,
        dropout_p: #p,
        dropout_seed: #seed,
    });
    Ok((gqa, p, tokens))
}

/// `ScatterReduce::Sum` and the other reductions.
pub(super) fn scatter_reduce(e: &Expr) -> Result<(ScatterReduce, TokenStream)> {
    let name = match e {
        Expr::Path(p)
            if p.path.segments.len() == 2 && p.path.segments[0].ident == "ScatterReduce" =>
        {
            p.path.segments[1].ident.to_string()
        }
        _ => String::new(),
    };
    let r = match name.as_str() {
        "Sum" => ScatterReduce::Sum,
        "Prod" => ScatterReduce::Prod,
        "Mean" => ScatterReduce::Mean,
        "Amax" => ScatterReduce::Amax,
        "Amin" => ScatterReduce::Amin,
        _ => {
            return Err(Error::new_spanned(
                e,
                "the reduction must be `ScatterReduce::Sum`, `Prod`, `Mean`, `Amax` or `Amin`",
            ))
        }
    };
    let id = quote::format_ident!("{}", name);
    Ok((r, quote!(::morok::ScatterReduce::#id)))
}
