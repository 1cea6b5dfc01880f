//! The literal forms of the convolution and pooling options in a kernel
//! body: `ConvOptions { stride: (2, 2), padding: (1, 1),
//! ..Default::default() }` and `PoolOptions::new((2, 2)).stride((1, 1))`
//! with the builder calls of the `Tensor` API. Each gives the shape rules'
//! geometry and the tokens of the value the op node passes at run time.

use super::{count_lit, int_lit};
use morok_core::shape::{ConvGeometry, InterpolateMode, Pads, PoolGeometry, Slice};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Error, Expr, Result};

/// `(a, b)` of two non-negative integer literals.
fn usize_pair(e: &Expr, what: &str) -> Result<(usize, usize)> {
    match e {
        Expr::Tuple(t) if t.elems.len() == 2 => {
            Ok((count_lit(&t.elems[0], what)?, count_lit(&t.elems[1], what)?))
        }
        Expr::Paren(p) => usize_pair(&p.expr, what),
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be a pair of integer literals such as `(2, 2)`"),
        )),
    }
}

/// A padding of two axes: `1` (every side), `(1, 2)` (both sides of each
/// axis, PyTorch's), or `(before, after)` pairs `[(1, 0), (0, 1)]`,
/// optionally as `Pads([...])`.
fn padding(e: &Expr) -> Result<Pads<2>> {
    let wrong = || {
        Error::new_spanned(
            e,
            "padding must be `1`, `(1, 2)` or `(before, after)` pairs such as \
             `Pads([(1, 0), (0, 1)])`",
        )
    };
    match e {
        Expr::Lit(_) => Ok(Pads::from(count_lit(e, "padding")?)),
        Expr::Tuple(_) | Expr::Paren(_) => Ok(Pads::from(usize_pair(e, "padding")?)),
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Pads") => {
                padding(&c.args[0])
            }
            _ => Err(wrong()),
        },
        Expr::Array(a) if a.elems.len() == 2 => {
            let mut pairs = [(0isize, 0isize); 2];
            for (slot, p) in pairs.iter_mut().zip(&a.elems) {
                let Expr::Tuple(t) = p else {
                    return Err(wrong());
                };
                if t.elems.len() != 2 {
                    return Err(wrong());
                }
                let side = |x: &Expr| Ok::<_, Error>(int_lit(x, "padding")? as isize);
                *slot = (side(&t.elems[0])?, side(&t.elems[1])?);
            }
            Ok(Pads(pairs))
        }
        _ => Err(wrong()),
    }
}

fn pads_tokens(p: Pads<2>) -> TokenStream {
    let [(a, b), (c, d)] = p.0;
    quote!(::morok::Pads([(#a, #b), (#c, #d)]))
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
                "padding" => g.padding = padding(&f.expr)?,
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
    let pads = pads_tokens(g.padding);
    let tokens = quote!(::morok::ConvOptions {
        stride: (#s0, #s1),
        padding: #pads,
        dilation: (#d0, #d1),
        groups: #groups,
    });
    Ok((g, tokens))
}

/// `PoolOptions::new((2, 2))` followed by the builder calls `stride`,
/// `padding`, `dilation`, `ceil_mode`, `count_include_pad` and
/// `divisor_override`.
pub(super) fn pool_options(e: &Expr) -> Result<(PoolGeometry, TokenStream)> {
    let form = "the options must be `PoolOptions::new((2, 2))`, optionally followed by \
                `.stride((1, 1))`, `.padding((1, 1))`, `.dilation((1, 1))`, \
                `.ceil_mode(true)`, `.count_include_pad(false)`, `.divisor_override(4)`";
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
                    && p.path.segments[0].ident == "PoolOptions"
                    && p.path.segments[1].ident == "new" =>
            {
                usize_pair(&c.args[0], "the kernel")?
            }
            _ => return Err(Error::new_spanned(at, form)),
        },
        _ => return Err(Error::new_spanned(at, form)),
    };
    let (mut stride, mut dilation, mut pads) = (kernel, (1, 1), Pads::<2>::ZERO);
    let (mut ceil, mut include, mut divisor) = (false, true, None);
    for m in calls.iter().rev() {
        let one = || -> Result<&Expr> {
            match m.args.len() {
                1 => Ok(&m.args[0]),
                _ => Err(Error::new_spanned(m, form)),
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
            "stride" => stride = usize_pair(one()?, "stride")?,
            "dilation" => dilation = usize_pair(one()?, "dilation")?,
            "padding" => pads = padding(one()?)?,
            "ceil_mode" => ceil = flag(one()?, "ceil_mode")?,
            "count_include_pad" => include = flag(one()?, "count_include_pad")?,
            "divisor_override" => divisor = Some(count_lit(one()?, "divisor_override")?),
            _ => return Err(Error::new_spanned(&m.method, form)),
        }
    }
    let g = PoolGeometry {
        kernel: vec![kernel.0, kernel.1],
        stride: vec![stride.0, stride.1],
        padding: pads.to_vec(),
        dilation: vec![dilation.0, dilation.1],
        ceil_mode: ceil,
        count_include_pad: include,
        divisor_override: divisor,
    };
    let ((k0, k1), (s0, s1), (d0, d1)) = (kernel, stride, dilation);
    let pads = pads_tokens(pads);
    let divisor = match divisor {
        Some(d) => quote!(::core::option::Option::Some(#d)),
        None => quote!(::core::option::Option::None),
    };
    let tokens = quote!(::morok::PoolOptions {
        kernel: (#k0, #k1),
        stride: (#s0, #s1),
        padding: #pads,
        dilation: (#d0, #d1),
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
