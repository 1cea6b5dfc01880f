//! The literal forms of the other option values in a kernel body: Python
//! slices (`[1..3, .., Slice::all().step(2)]`), `InterpolateMode::..`,
//! `ScatterReduce::..`, `PadMode::..`, and the `IsCloseOptions { .. }` and
//! `AttentionOptions { .. }` structs.

use super::options::is_default;
use super::{count_lit, int_lit};
use morok_core::shape::{InterpolateMode, PadMode, Slice};
use morok_core::tensor_ops::ScatterReduce;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Error, Expr, Result};

/// One slice: a range of integer literals (`1..3`, `-2..`, `..`), or
/// `Slice::all()`, `Slice::range(a, b)`, `Slice::from(a)`, `Slice::to(b)`
/// with an optional `.step(k)`.
pub(super) fn slice(e: &Expr) -> Result<Slice> {
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
    let toks = v.iter().map(slice_tokens);
    let tokens = quote!(&[#(#toks),*]);
    Ok((v, tokens))
}

/// The tokens of the value `s` (`::morok::Slice { .. }`).
pub(super) fn slice_tokens(s: &Slice) -> TokenStream {
    let opt = |b: Option<isize>| match b {
        Some(x) => quote!(::core::option::Option::Some(#x)),
        None => quote!(::core::option::Option::None),
    };
    let (start, end, step) = (opt(s.start), opt(s.end), s.step);
    quote!(::morok::Slice { start: #start, end: #end, step: #step })
}

/// `InterpolateMode::Nearest` and the other modes.
pub(super) fn interpolate_mode(e: &Expr) -> Result<(InterpolateMode, TokenStream)> {
    use InterpolateMode as M;
    unit_variant(
        e,
        "InterpolateMode",
        &[
            ("Nearest", M::Nearest),
            ("NearestExact", M::NearestExact),
            ("Linear", M::Linear),
            ("Bilinear", M::Bilinear),
            ("Trilinear", M::Trilinear),
        ],
        "the mode must be `InterpolateMode::Nearest`, `NearestExact`, `Linear`, `Bilinear` or \
         `Trilinear`",
    )
}

/// The variant named in `Enum::Variant` (`enum_name` is `Enum`), when `p`
/// is such a path.
fn variant_name(p: &syn::ExprPath, enum_name: &str) -> Option<String> {
    (p.path.segments.len() == 2 && p.path.segments[0].ident == enum_name)
        .then(|| p.path.segments[1].ident.to_string())
}

/// A unit variant `Enum::Variant` of `enum_name` among `variants` (name,
/// value): its value and the tokens `::morok::Enum::Variant`; `wrong` is
/// the error for anything else.
pub(super) fn unit_variant<T: Copy>(
    e: &Expr,
    enum_name: &str,
    variants: &[(&str, T)],
    wrong: &str,
) -> Result<(T, TokenStream)> {
    let found = match e {
        Expr::Path(p) => variant_name(p, enum_name)
            .and_then(|name| variants.iter().find(|(n, _)| *n == name).copied()),
        _ => None,
    };
    let (name, value) = found.ok_or_else(|| Error::new_spanned(e, wrong))?;
    let (ty, id) = (
        quote::format_ident!("{}", enum_name),
        quote::format_ident!("{}", name),
    );
    Ok((value, quote!(::morok::#ty::#id)))
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
    use ScatterReduce as R;
    unit_variant(
        e,
        "ScatterReduce",
        &[
            ("Sum", R::Sum),
            ("Prod", R::Prod),
            ("Mean", R::Mean),
            ("Amax", R::Amax),
            ("Amin", R::Amin),
        ],
        "the reduction must be `ScatterReduce::Sum`, `Prod`, `Mean`, `Amax` or `Amin`",
    )
}

/// `PadMode::Reflect`, `PadMode::Replicate`, `PadMode::Circular` or
/// `PadMode::Constant(value)`.
pub(super) fn pad_mode(e: &Expr) -> Result<(PadMode, TokenStream)> {
    let form = "the mode must be `PadMode::Reflect`, `PadMode::Replicate`, \
                `PadMode::Circular` or `PadMode::Constant(0.0)`";
    match e {
        Expr::Path(_) => unit_variant(
            e,
            "PadMode",
            &[
                ("Reflect", PadMode::Reflect),
                ("Replicate", PadMode::Replicate),
                ("Circular", PadMode::Circular),
            ],
            form,
        ),
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p) if variant_name(p, "PadMode").as_deref() == Some("Constant") => {
                let v = number(&c.args[0], "the constant")?;
                Ok((PadMode::Constant(v), quote!(::morok::PadMode::Constant(#v))))
            }
            _ => Err(Error::new_spanned(e, form)),
        },
        _ => Err(Error::new_spanned(e, form)),
    }
}

/// The literal fields of `ClassLossOptions`.
pub(super) struct ClassLossLiteral<'e> {
    /// The weight's expression (`w` of `weight: Some(w)`), if given.
    pub(super) weight: Option<&'e Expr>,
    /// `ignore_index`.
    pub(super) ignore_index: Option<i64>,
    /// `label_smoothing`.
    pub(super) label_smoothing: f64,
    /// The reduction and its tokens.
    pub(super) reduction: (morok_core::tensor_ops::Reduction, TokenStream),
}

/// `&ClassLossOptions { weight, ignore_index, label_smoothing, reduction
/// }` (the `&` may be left out).
pub(super) fn class_loss_options(e: &Expr) -> Result<ClassLossLiteral<'_>> {
    use morok_core::tensor_ops::Reduction;
    let e = match e {
        Expr::Reference(r) => &*r.expr,
        other => other,
    };
    let fields = ["weight", "ignore_index", "label_smoothing", "reduction"];
    let mut out = ClassLossLiteral {
        weight: None,
        ignore_index: None,
        label_smoothing: 0.0,
        reduction: (Reduction::Mean, quote!(::morok::Reduction::Mean)),
    };
    for (field, x) in struct_fields(e, "ClassLossOptions", &fields)? {
        let some = optional_expr(x);
        match field.as_str() {
            "weight" => {
                out.weight = some.ok_or_else(|| {
                    Error::new_spanned(x, "weight must be `Some(tensor)` or `None`")
                })?
            }
            "ignore_index" => {
                out.ignore_index = match some {
                    Some(v) => v.map(|v| int_lit(v, "ignore_index")).transpose()?,
                    None => {
                        return Err(Error::new_spanned(
                            x,
                            "ignore_index must be `Some(-100)` or `None`",
                        ))
                    }
                }
            }
            "label_smoothing" => out.label_smoothing = number(x, "label_smoothing")?,
            _ => {
                out.reduction = unit_variant(
                    x,
                    "Reduction",
                    &[
                        ("None", Reduction::None),
                        ("Mean", Reduction::Mean),
                        ("Sum", Reduction::Sum),
                    ],
                    "reduction must be `Reduction::Mean`, `Reduction::Sum` or `Reduction::None`",
                )?
            }
        }
    }
    Ok(out)
}

/// `Some(inner)` as `Some(Some(inner))`, `None` as `Some(None)`, anything
/// else as `None`.
fn optional_expr(x: &Expr) -> Option<Option<&Expr>> {
    match x {
        Expr::Path(n) if n.path.is_ident("None") => Some(None),
        Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, Expr::Path(n) if n.path.is_ident("Some")) =>
        {
            Some(Some(&c.args[0]))
        }
        _ => None,
    }
}
