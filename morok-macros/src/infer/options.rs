//! The literal forms of the convolution and pooling options in a kernel
//! body: `ConvOptions { stride: (2, 2), padding: (1, 1),
//! ..Default::default() }` (and the other convolutions' structs) and
//! `PoolOptions::new((2, 2)).stride((1, 1))` with the builder calls of the
//! `Tensor` API (the other literals are in `literals.rs`). Each gives the
//! shape rules' geometry and the tokens of the value the op node passes at
//! run time.

use super::{count_lit, int_lit};
use morok_core::shape::{ConvGeometry, ConvNd, Pads, PoolGeometry};
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
pub(super) fn is_default(e: &Expr, name: &str) -> bool {
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
