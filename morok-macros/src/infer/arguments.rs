//! The arguments of a method call in a kernel body, read by their kind in
//! the op table (`morok_core::tensor_ops::ArgKind`): tensors and operands
//! become operands of the node, literals become its `Lit` constants and
//! what the shape rules see ([`ArgValue`]).

use super::methods::arg_value;
use super::*;
use morok_core::shape::IndexEntry;
use morok_core::tensor_ops::{ArgKind, ArgValue, Reduction, RoundingMode};

/// One checked argument of a call.
pub(super) struct Checked {
    /// Its declared kind.
    pub(super) kind: ArgKind,
    /// What the rules see.
    pub(super) value: ArgValue<SymDim>,
    /// The operand, for tensor and operand arguments (a node or literal).
    pub(super) operand: Option<Ref>,
    /// The `Lit` tokens, for literal arguments.
    pub(super) lit: Option<TokenStream>,
    /// The operands of a list of tensors (a function's), in order.
    pub(super) list: Vec<Ref>,
}

impl Ctx<'_> {
    /// Reads one argument of `op` of kind `kind` named `name` (for
    /// errors).
    pub(super) fn argument(
        &mut self,
        op: &str,
        kind: ArgKind,
        name: &str,
        e: &Expr,
    ) -> Result<Checked> {
        let g = g();
        let lit = |value: ArgValue<SymDim>, lit: TokenStream| Checked {
            kind,
            list: Vec::new(),
            value,
            operand: None,
            lit: Some(lit),
        };
        Ok(match kind {
            ArgKind::Tensor
            | ArgKind::Index
            | ArgKind::Mask
            | ArgKind::Labels
            | ArgKind::ClassTarget => {
                let (t, s, r) = self.tensor(e)?;
                Checked {
                    kind,
                    list: Vec::new(),
                    value: ArgValue::Tensor(t, s),
                    operand: Some(r),
                    lit: None,
                }
            }
            ArgKind::Operand => {
                let v = self.expr(e)?;
                Checked {
                    kind,
                    list: Vec::new(),
                    value: arg_value(&v.ty, v.r),
                    operand: Some(v.r),
                    lit: None,
                }
            }
            ArgKind::Axis => {
                let a = axis(e)?;
                lit(ArgValue::Axis(a), quote!(#g::Lit::Axis(#a)))
            }
            ArgKind::Axes => {
                let a = axes_list(e)?;
                lit(ArgValue::Axes(a.clone()), quote!(#g::Lit::Axes(&[#(#a),*])))
            }
            ArgKind::Bool => {
                let b = bool_lit(e, name)?;
                lit(ArgValue::Bool(b), quote!(#g::Lit::Bool(#b)))
            }
            ArgKind::Float => {
                let v = float_lit(e, name)?;
                if !v.is_finite() {
                    return Err(Error::new_spanned(e, "the literal overflows"));
                }
                lit(ArgValue::Float(v), quote!(#g::Lit::Float(#v)))
            }
            ArgKind::Int => {
                let v = int_lit(e, name)?;
                lit(ArgValue::Int(v), quote!(#g::Lit::Int(#v)))
            }
            ArgKind::Count => {
                let v = count_lit(e, name)?;
                lit(ArgValue::Count(v), quote!(#g::Lit::Count(#v)))
            }
            ArgKind::Sizes => {
                if !matches!(e, Expr::Array(_)) {
                    return Err(Error::new_spanned(
                        e,
                        format!("{name} must be a list literal such as `[2, 1]`"),
                    ));
                }
                let v = list_elems(e)
                    .map(|d| count_lit(d, name))
                    .collect::<Result<Vec<_>>>()?;
                lit(
                    ArgValue::Sizes(v.clone()),
                    quote!(#g::Lit::Sizes(&[#(#v),*])),
                )
            }
            ArgKind::Dims => {
                let (target, codes) = self.dim_list(e)?;
                lit(
                    ArgValue::Dims(target),
                    quote!(#g::Lit::Dims(&[#(#codes),*])),
                )
            }
            ArgKind::Reduction => {
                let wrong = format!(
                    "{name} must be `Reduction::Mean`, `Reduction::Sum` or `Reduction::None`"
                );
                let variants = [
                    ("None", Reduction::None),
                    ("Mean", Reduction::Mean),
                    ("Sum", Reduction::Sum),
                ];
                let (r, tokens) = super::literals::unit_variant(e, "Reduction", &variants, &wrong)?;
                lit(ArgValue::Reduction(r), quote!(#g::Lit::Reduction(#tokens)))
            }
            ArgKind::Pads => {
                let v = pair_list(e, name, "[(1, 1), (0, -2)]")?;
                let toks = v.iter().map(|&(a, b)| {
                    let (a, b) = (a as isize, b as isize);
                    quote!((#a, #b))
                });
                let pairs = v.iter().map(|&(a, b)| (a as isize, b as isize)).collect();
                lit(ArgValue::Pads(pairs), quote!(#g::Lit::Pads(&[#(#toks),*])))
            }
            ArgKind::Bounds => {
                let v = pair_list(e, name, "[(0, 2), (1, 3)]")?;
                let bounds = v
                    .iter()
                    .map(|&(a, b)| Ok((usize::try_from(a)?, usize::try_from(b)?)))
                    .collect::<std::result::Result<Vec<(usize, usize)>, std::num::TryFromIntError>>(
                    )
                    .map_err(|_| {
                        Error::new_spanned(e, format!("{name} must be non-negative integer pairs"))
                    })?;
                let toks = bounds.iter().map(|&(a, b)| quote!((#a, #b)));
                lit(
                    ArgValue::Bounds(bounds.clone()),
                    quote!(#g::Lit::Bounds(&[#(#toks),*])),
                )
            }
            ArgKind::Ints => {
                if !matches!(e, Expr::Array(_)) {
                    return Err(Error::new_spanned(
                        e,
                        format!("{name} must be a list literal such as `[1, -2]`"),
                    ));
                }
                let v = list_elems(e)
                    .map(|d| Ok(int_lit(d, name)? as isize))
                    .collect::<Result<Vec<_>>>()?;
                lit(ArgValue::Ints(v.clone()), quote!(#g::Lit::Ints(&[#(#v),*])))
            }
            ArgKind::OptionalAxis => {
                let d = optional_axis(e, name)?;
                let tok = match d {
                    Some(a) => quote!(::core::option::Option::Some(#a)),
                    None => quote!(::core::option::Option::None),
                };
                lit(
                    ArgValue::OptionalAxis(d),
                    quote!(#g::Lit::OptionalAxis(#tok)),
                )
            }
            ArgKind::OptionalTensor => match e {
                Expr::Path(p) if p.path.is_ident("None") => Checked {
                    kind,
                    list: Vec::new(),
                    value: ArgValue::Absent,
                    operand: None,
                    lit: Some(quote!(#g::Lit::Present(false))),
                },
                Expr::Call(c)
                    if c.args.len() == 1
                        && matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Some")) =>
                {
                    let (t, s, r) = self.tensor(&c.args[0])?;
                    Checked {
                        kind,
                        list: Vec::new(),
                        value: ArgValue::Tensor(t, s),
                        operand: Some(r),
                        lit: Some(quote!(#g::Lit::Present(true))),
                    }
                }
                _ => {
                    return Err(Error::new_spanned(
                        e,
                        format!("{name} must be `Some(tensor)` or `None`"),
                    ))
                }
            },
            ArgKind::ConvOptions => {
                let (geometry, tokens) = super::options::conv_options(e)?;
                lit(ArgValue::Conv(geometry), quote!(#g::Lit::Conv(#tokens)))
            }
            ArgKind::Slices => {
                let (v, tokens) = super::literals::slices(e)?;
                lit(ArgValue::Slices(v), quote!(#g::Lit::Slices(#tokens)))
            }
            ArgKind::InterpolateMode => {
                let (m, tokens) = super::literals::interpolate_mode(e)?;
                lit(
                    ArgValue::InterpolateMode(m),
                    quote!(#g::Lit::InterpolateMode(#tokens)),
                )
            }
            ArgKind::PoolOptions => {
                let (geometry, tokens) = super::options::pool_options(e, "PoolOptions")?;
                lit(ArgValue::Pool(geometry), quote!(#g::Lit::Pool(#tokens)))
            }
            ArgKind::IsCloseOptions => {
                let tokens = super::literals::isclose_options(e)?;
                lit(ArgValue::Opaque, quote!(#g::Lit::IsClose(#tokens)))
            }
            ArgKind::AttentionOptions => {
                let (enable_gqa, dropout_p, tokens) = super::literals::attention_options(e)?;
                lit(
                    ArgValue::Attention {
                        enable_gqa,
                        dropout_p,
                    },
                    quote!(#g::Lit::Attention(#tokens)),
                )
            }
            ArgKind::PadMode => {
                let (m, tokens) = super::literals::pad_mode(e)?;
                lit(ArgValue::PadMode(m), quote!(#g::Lit::PadMode(#tokens)))
            }
            ArgKind::ScatterReduce => {
                let (r, tokens) = super::literals::scatter_reduce(e)?;
                lit(
                    ArgValue::ScatterReduce(r),
                    quote!(#g::Lit::ScatterReduce(#tokens)),
                )
            }
            ArgKind::ConvNdOptions => {
                let (geometry, variant, tokens) = super::options::conv_nd_options(e, op)?;
                lit(
                    ArgValue::ConvNd(geometry),
                    quote!(#g::Lit::#variant(#tokens)),
                )
            }
            ArgKind::Pool3dOptions => {
                let (geometry, tokens) = super::options::pool_options(e, "Pool3dOptions")?;
                lit(ArgValue::Pool(geometry), quote!(#g::Lit::Pool3d(#tokens)))
            }
            ArgKind::RoundingMode => {
                let (m, tokens) = super::literals::unit_variant(
                    e,
                    "RoundingMode",
                    &[
                        ("None", RoundingMode::None),
                        ("Trunc", RoundingMode::Trunc),
                        ("Floor", RoundingMode::Floor),
                    ],
                    &format!(
                        "{name} must be `RoundingMode::None`, `RoundingMode::Trunc` or \
                         `RoundingMode::Floor`"
                    ),
                )?;
                lit(
                    ArgValue::RoundingMode(m),
                    quote!(#g::Lit::RoundingMode(#tokens)),
                )
            }
            ArgKind::Floats => {
                if !matches!(e, Expr::Array(_)) {
                    return Err(Error::new_spanned(
                        e,
                        format!("{name} must be a list literal such as `[2.0, 1.5]`"),
                    ));
                }
                let v = list_elems(e)
                    .map(|d| float_lit(d, name))
                    .collect::<Result<Vec<_>>>()?;
                lit(
                    ArgValue::Floats(v.clone()),
                    quote!(#g::Lit::Floats(&[#(#v),*])),
                )
            }
            ArgKind::OptionalSizes => {
                let sizes = optional_sizes(e, name)?;
                let tok = match &sizes {
                    Some(v) => quote!(::core::option::Option::Some(&[#(#v),*])),
                    None => quote!(::core::option::Option::None),
                };
                lit(
                    ArgValue::OptionalSizes(sizes),
                    quote!(#g::Lit::OptionalSizes(#tok)),
                )
            }
            ArgKind::ClassLossOptions => {
                let o = super::literals::class_loss_options(e)?;
                let (weight, operand) = match o.weight {
                    Some(w) => {
                        let (t, s, r) = self.tensor(w)?;
                        (Some((t, s)), Some(r))
                    }
                    None => (None, None),
                };
                let has_weight = weight.is_some();
                let ignore = match o.ignore_index {
                    Some(i) => quote!(::core::option::Option::Some(#i)),
                    None => quote!(::core::option::Option::None),
                };
                let (smoothing, (reduction, reduction_tokens)) = (o.label_smoothing, o.reduction);
                Checked {
                    kind,
                    list: Vec::new(),
                    value: ArgValue::ClassLoss {
                        weight,
                        ignore_index: o.ignore_index,
                        label_smoothing: smoothing,
                        reduction,
                    },
                    operand,
                    lit: Some(quote!(#g::Lit::ClassLoss(#g::ClassLossLit {
                        weight: #has_weight,
                        ignore_index: #ignore,
                        label_smoothing: #smoothing,
                        reduction: #reduction_tokens,
                    }))),
                }
            }
            ArgKind::Tensors => {
                let strip = |x: &'_ Expr| -> Expr {
                    match x {
                        Expr::Reference(r) => (*r.expr).clone(),
                        other => other.clone(),
                    }
                };
                let list = strip(e);
                let Expr::Array(items) = &list else {
                    return Err(Error::new_spanned(
                        e,
                        format!("{name} must be a list literal of tensors such as `[a, b]`"),
                    ));
                };
                if items.elems.is_empty() {
                    return Err(Error::new_spanned(
                        e,
                        format!("{op}: needs at least one tensor"),
                    ));
                }
                let mut types = Vec::new();
                let mut refs = Vec::new();
                for item in &items.elems {
                    let (t, s, r) = self.tensor(&strip(item))?;
                    types.push((t, s));
                    refs.push(r);
                }
                Checked {
                    kind,
                    list: refs,
                    value: ArgValue::Tensors(types),
                    operand: None,
                    lit: None,
                }
            }
            ArgKind::Indices => {
                let list = match e {
                    Expr::Reference(r) => &*r.expr,
                    other => other,
                };
                let form = format!(
                    "{name} must be a list literal of `Index::Int(0)`, `Index::Slice(1..3)`, \
                     `Index::NewAxis`, `Index::Ellipsis` and `Index::Tensor(i)`"
                );
                let Expr::Array(items) = list else {
                    return Err(Error::new_spanned(e, form));
                };
                let (mut entries, mut types, mut refs, mut toks) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for item in &items.elems {
                    let (variant, arg) = match item {
                        Expr::Path(p) => (p, None),
                        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
                            Expr::Path(p) => (p, Some(&c.args[0])),
                            _ => return Err(Error::new_spanned(item, &form)),
                        },
                        _ => return Err(Error::new_spanned(item, &form)),
                    };
                    let names: Vec<String> = variant
                        .path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect();
                    let parts: Vec<&str> = names.iter().map(String::as_str).collect();
                    match (parts.as_slice(), arg) {
                        (["Index", "Int"], Some(a)) => {
                            let i = int_lit(a, "an index")? as isize;
                            entries.push(IndexEntry::Int(i));
                            toks.push(quote!(#g::IndexLit::Int(#i)));
                        }
                        (["Index", "Slice"], Some(a)) => {
                            let s = super::literals::slice(a)?;
                            let value = super::literals::slice_tokens(&s);
                            entries.push(IndexEntry::Slice(s));
                            toks.push(quote!(#g::IndexLit::Slice(#value)));
                        }
                        (["Index", "NewAxis"], None) => {
                            entries.push(IndexEntry::NewAxis);
                            toks.push(quote!(#g::IndexLit::NewAxis));
                        }
                        (["Index", "Ellipsis"], None) => {
                            entries.push(IndexEntry::Ellipsis);
                            toks.push(quote!(#g::IndexLit::Ellipsis));
                        }
                        (["Index", "Tensor"], Some(a)) => {
                            let (t, s, r) = self.tensor(a)?;
                            if t.is_bool() {
                                return Err(Error::new_spanned(
                                    a,
                                    format!(
                                        "{op}: a bool mask selects as many elements as it has \
                                         true ones, known only when it runs: a kernel body \
                                         cannot index with one (use `where_` or `masked_fill`)"
                                    ),
                                ));
                            }
                            entries.push(IndexEntry::Tensor(s));
                            types.push(t);
                            refs.push(r);
                            toks.push(quote!(#g::IndexLit::Tensor));
                        }
                        _ => return Err(Error::new_spanned(item, &form)),
                    }
                }
                Checked {
                    kind,
                    list: refs,
                    value: ArgValue::Indices(entries, types),
                    operand: None,
                    lit: Some(quote!(#g::Lit::Indices(&[#(#toks),*]))),
                }
            }
            ArgKind::Equation => match e {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => {
                    let v = text.value();
                    lit(ArgValue::Equation(v.clone()), quote!(#g::Lit::Equation(#v)))
                }
                _ => {
                    return Err(Error::new_spanned(
                        e,
                        format!("{name} must be a string literal such as `\"ij,jk->ik\"`"),
                    ))
                }
            },
            ArgKind::ElementType => {
                let id = match e {
                    Expr::Path(p) => p.path.get_ident(),
                    _ => None,
                }
                .ok_or_else(|| Error::new_spanned(e, "expected an element type such as `f16`"))?;
                let to = crate::sig::dtype_named(id)?;
                let tt = crate::sig::dtype_tokens(to);
                lit(ArgValue::ElementType(to), quote!(#g::Lit::DType(#tt)))
            }
        })
    }
}

/// A list literal of integer pairs (`[(1, 1), (0, -2)]`; `form` is an
/// example in errors).
fn pair_list(e: &Expr, what: &str, form: &str) -> Result<Vec<(i64, i64)>> {
    let wrong = || {
        Error::new_spanned(
            e,
            format!("{what} must be a list literal of integer pairs such as `{form}`"),
        )
    };
    let Expr::Array(list) = e else {
        return Err(wrong());
    };
    list.elems
        .iter()
        .map(|p| match p {
            Expr::Tuple(t) if t.elems.len() == 2 => {
                Ok((int_lit(&t.elems[0], what)?, int_lit(&t.elems[1], what)?))
            }
            _ => Err(wrong()),
        })
        .collect()
}

/// `Some(axis)` or `None`.
fn optional_axis(e: &Expr, what: &str) -> Result<Option<isize>> {
    match e {
        Expr::Path(p) if p.path.is_ident("None") => Ok(None),
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p) if p.path.is_ident("Some") => Ok(Some(axis(&c.args[0])?)),
            _ => Err(Error::new_spanned(
                e,
                format!("{what} must be `Some(axis)` or `None`"),
            )),
        },
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be `Some(axis)` or `None`"),
        )),
    }
}

/// `None`, `Some(8)` or `Some((8, 8))`: optional sizes, one per axis.
fn optional_sizes(e: &Expr, what: &str) -> Result<Option<Vec<usize>>> {
    let wrong = || {
        Error::new_spanned(
            e,
            format!("{what} must be `None`, `Some(8)` or `Some((8, 8))`"),
        )
    };
    match e {
        Expr::Path(p) if p.path.is_ident("None") => Ok(None),
        Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Some")) =>
        {
            match &c.args[0] {
                Expr::Tuple(t) => t
                    .elems
                    .iter()
                    .map(|x| count_lit(x, what))
                    .collect::<Result<Vec<_>>>()
                    .map(Some),
                Expr::Paren(p) => Ok(Some(vec![count_lit(&p.expr, what)?])),
                x => Ok(Some(vec![count_lit(x, what)?])),
            }
        }
        _ => Err(wrong()),
    }
}
