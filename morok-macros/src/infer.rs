//! Checks a kernel body with the core shape rules and writes it as the
//! nodes of a static `morok::dsl::graph::Graph`.
//!
//! Each tensor-valued sub-expression becomes one node (its op, inferred
//! element type and operands); literal operands are constants in the
//! node's operand list, and arithmetic between literals is folded here.
//! Shapes are symbolic ([`SymDim`]): a signature name stands for itself
//! only, and reaches `reshape`/`expand` nodes as a symbolic entry.

use crate::layers::DeclaredLayer;
use morok_core::shape::{self, ReshapeDim, SymDim};
use morok_core::ScalarType;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::{BinOp, Error, Expr, Lit, Result, UnOp};

mod arguments;
mod literals;
mod methods;
mod options;

/// The type of a value in a body.
#[derive(Clone, Debug)]
pub enum Ty {
    /// A tensor of an element type and shape.
    Tensor(ScalarType, Vec<SymDim>),
    /// A float literal (takes the dtype of the float tensor it meets).
    Float,
    /// An integer literal (takes the dtype of the tensor it meets).
    Int,
    /// A `true`/`false` literal.
    Bool,
}

/// Where a checked value lives: a node of the graph, or a literal.
#[derive(Clone, Copy, Debug)]
pub enum Ref {
    /// Node number `i`.
    Node(usize),
    /// A float literal.
    F(f64),
    /// An integer literal.
    I(i64),
    /// A bool literal.
    B(bool),
}

/// The path of the run-time graph types.
fn g() -> TokenStream {
    quote!(::morok::dsl::graph)
}

impl Ref {
    /// The value as an operand of a node (`Src`).
    fn src(self) -> TokenStream {
        let g = g();
        match self {
            Ref::Node(i) => {
                let i = i as u32;
                quote!(#g::Src::Node(#i))
            }
            Ref::F(v) => quote!(#g::Src::F64(#v)),
            Ref::I(v) => quote!(#g::Src::I64(#v)),
            Ref::B(v) => quote!(#g::Src::Bool(#v)),
        }
    }
}

/// A checked value: its type and where it lives.
#[derive(Clone, Debug)]
pub struct Val {
    /// The type.
    pub ty: Ty,
    /// Its node or literal.
    pub r: Ref,
}

/// The checking context of one body.
pub struct Ctx<'a> {
    /// Values in scope: parameters, `let` bindings, raw model parameters.
    pub vars: HashMap<String, Val>,
    /// Layers callable by name (`model!` only).
    pub layers: &'a HashMap<String, DeclaredLayer>,
    /// The signature's dim names; name `i` is `DimTok::Name(i)` in a node.
    pub dims: Vec<String>,
    /// The nodes generated so far (`morok::dsl::graph::Node` values).
    pub nodes: Vec<TokenStream>,
    /// The layers the body applies, in order of first use: `Layer(i)`
    /// nodes index this list.
    pub used_layers: Vec<String>,
}

/// Checks that a float literal (or a folded one) is finite.
fn finite(e: &Expr, v: f64) -> Result<Ref> {
    if v.is_finite() {
        Ok(Ref::F(v))
    } else {
        Err(Error::new_spanned(e, "the literal overflows"))
    }
}

fn shape_text(s: &[SymDim]) -> String {
    shape::shape_text(s)
}

/// The integer value of a literal such as `1` or `-1`.
pub fn int_lit(e: &Expr, what: &str) -> Result<i64> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse(),
            _ => Err(Error::new_spanned(
                e,
                format!("{what} must be an integer literal"),
            )),
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => Ok(-int_lit(&u.expr, what)?),
        Expr::Paren(p) => int_lit(&p.expr, what),
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be an integer literal"),
        )),
    }
}

/// A non-negative integer literal (`what` names it in errors).
fn count_lit(e: &Expr, what: &str) -> Result<usize> {
    let v = int_lit(e, what)?;
    usize::try_from(v).map_err(|_| {
        Error::new_spanned(e, format!("{what} must be a non-negative integer literal"))
    })
}

/// A list literal of axes such as `[1]` or `[0, -1]`.
fn axes_list(e: &Expr) -> Result<Vec<isize>> {
    match e {
        Expr::Array(a) => a.elems.iter().map(axis).collect(),
        _ => Err(Error::new_spanned(
            e,
            "the axes must be a list literal such as `[1]` or `[0, 1]`",
        )),
    }
}

/// The elements of a list literal (none for anything else).
fn list_elems(e: &Expr) -> impl Iterator<Item = &Expr> {
    match e {
        Expr::Array(a) => Some(a.elems.iter()),
        _ => None,
    }
    .into_iter()
    .flatten()
}

fn bool_lit(e: &Expr, what: &str) -> Result<bool> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be `true` or `false`"),
        )),
    }
}

fn float_lit(e: &Expr, what: &str) -> Result<f64> {
    match e {
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => Ok(-float_lit(&u.expr, what)?),
        Expr::Paren(p) => float_lit(&p.expr, what),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse(),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => Ok(i.base10_parse::<i64>()? as f64),
        _ => Err(Error::new_spanned(
            e,
            format!("{what} must be a number literal"),
        )),
    }
}

fn axis(e: &Expr) -> Result<isize> {
    Ok(int_lit(e, "an axis")? as isize)
}

/// The name of the tensor API method behind a binary operator.
fn binop_method(op: &BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Add(_) => "add",
        BinOp::Sub(_) => "sub",
        BinOp::Mul(_) => "mul",
        BinOp::Div(_) => "div",
        BinOp::Lt(_) => "lt",
        BinOp::Le(_) => "le",
        BinOp::Gt(_) => "gt",
        BinOp::Ge(_) => "ge",
        BinOp::Eq(_) => "eq",
        BinOp::Ne(_) => "ne",
        _ => return None,
    })
}

impl<'a> Ctx<'a> {
    /// A context with the given dim names and layers and no values.
    pub fn new(dims: Vec<String>, layers: &'a HashMap<String, DeclaredLayer>) -> Ctx<'a> {
        Ctx {
            vars: HashMap::new(),
            layers,
            dims,
            nodes: Vec::new(),
            used_layers: Vec::new(),
        }
    }

    /// Adds a node computing `op` (a `NodeOp` variant, without its path)
    /// from `src`; its value has `dtype` and `shape`.
    pub fn bind(
        &mut self,
        dtype: ScalarType,
        shape: Vec<SymDim>,
        op: TokenStream,
        src: &[Ref],
    ) -> Val {
        let g = g();
        let dt = crate::sig::dtype_tokens(dtype);
        let src = src.iter().map(|r| r.src());
        self.nodes
            .push(quote!(#g::Node { op: #g::NodeOp::#op, dtype: #dt, src: &[#(#src),*] }));
        Val {
            ty: Ty::Tensor(dtype, shape),
            r: Ref::Node(self.nodes.len() - 1),
        }
    }

    /// Checks a block's statements and returns its final value.
    pub fn block(
        &mut self,
        stmts: &[syn::Stmt],
        whole: &impl quote::ToTokens,
    ) -> Result<(Val, Expr)> {
        let mut last = None;
        for (i, s) in stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => {
                    let syn::Pat::Ident(p) = &l.pat else {
                        return Err(Error::new_spanned(&l.pat, "a `let` binds one name"));
                    };
                    let Some(init) = &l.init else {
                        return Err(Error::new_spanned(l, "a `let` needs a value"));
                    };
                    let v = self.expr(&init.expr)?;
                    self.vars.insert(p.ident.to_string(), v);
                }
                syn::Stmt::Expr(e, None) if i + 1 == stmts.len() => last = Some(e.clone()),
                other => {
                    return Err(Error::new_spanned(
                        other,
                        "a body is `let` bindings followed by the result expression",
                    ))
                }
            }
        }
        let Some(e) = last else {
            return Err(Error::new_spanned(
                whole,
                "the body needs a result expression",
            ));
        };
        Ok((self.expr(&e)?, e))
    }

    /// Checks an expression that must be a tensor.
    fn tensor(&mut self, e: &Expr) -> Result<(ScalarType, Vec<SymDim>, Ref)> {
        let v = self.expr(e)?;
        match v.ty {
            Ty::Tensor(t, s) => Ok((t, s, v.r)),
            _ => Err(Error::new_spanned(e, "expected a tensor, found a literal")),
        }
    }

    /// Checks an expression.
    pub fn expr(&mut self, e: &Expr) -> Result<Val> {
        match e {
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Block(b) => {
                let (v, _) = self.block(&b.block.stmts, b)?;
                Ok(v)
            }
            Expr::Lit(l) => match &l.lit {
                Lit::Float(f) => Ok(Val {
                    ty: Ty::Float,
                    r: finite(e, f.base10_parse()?)?,
                }),
                Lit::Int(i) => Ok(Val {
                    ty: Ty::Int,
                    r: Ref::I(i.base10_parse()?),
                }),
                Lit::Bool(b) => Ok(Val {
                    ty: Ty::Bool,
                    r: Ref::B(b.value),
                }),
                _ => Err(Error::new_spanned(
                    e,
                    "only number and bool literals are allowed",
                )),
            },
            Expr::Path(p) => {
                let Some(id) = p.path.get_ident() else {
                    return Err(Error::new_spanned(e, "expected a name"));
                };
                self.vars.get(&id.to_string()).cloned().ok_or_else(|| {
                    let hint = if self.layers.contains_key(&id.to_string()) {
                        " (a layer is applied by calling it: `name(x)`)"
                    } else {
                        ""
                    };
                    Error::new_spanned(e, format!("unknown name `{id}`{hint}"))
                })
            }
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
                let v = self.expr(&u.expr)?;
                match v.ty {
                    Ty::Tensor(..) => self.negate(e, v),
                    Ty::Float | Ty::Int => {
                        let r =
                            match v.r {
                                Ref::F(x) => Ref::F(-x),
                                Ref::I(x) => Ref::I(x.checked_neg().ok_or_else(|| {
                                    Error::new_spanned(e, "the literal overflows")
                                })?),
                                other => other,
                            };
                        Ok(Val { ty: v.ty, r })
                    }
                    Ty::Bool => Err(Error::new_spanned(e, "neg: not defined for bool literals")),
                }
            }
            Expr::Binary(b) => {
                let Some(m) = binop_method(&b.op) else {
                    return Err(Error::new_spanned(
                        b.op,
                        "unsupported operator (use + - * / or a comparison)",
                    ));
                };
                let l = self.expr(&b.left)?;
                let r = self.expr(&b.right)?;
                self.binary(e, m, l, r)
            }
            Expr::MethodCall(m) => self.method(m),
            Expr::Field(f) => self.field(f),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p)
                    if p.path.segments.len() == 2 && p.path.segments[0].ident == "Tensor" =>
                {
                    let name = p.path.segments[1].ident.to_string();
                    self.function_call(c, &name)
                }
                _ => self.layer_call(c),
            },
            _ => Err(Error::new_spanned(
                e,
                "unsupported expression in a kernel body",
            )),
        }
    }

    /// The dims of a list literal such as `[B, 2, -1]` and their postfix
    /// forms (`&[DimTok]` slices).
    fn dim_list(&self, e: &Expr) -> Result<(Vec<ReshapeDim<SymDim>>, Vec<TokenStream>)> {
        if !matches!(e, Expr::Array(_)) {
            return Err(Error::new_spanned(
                e,
                "the new dims must be a list literal such as `[B, -1]`",
            ));
        }
        list_elems(e)
            .map(|d| self.dim_expr(d))
            .collect::<Result<Vec<_>>>()
            .map(|v| v.into_iter().unzip())
    }

    /// A dim inside `reshape([..])`/`expand([..])`: `-1`, a literal, a
    /// signature name, or `+ - * /` of those; its value and its postfix
    /// form (a `&[DimTok]` slice).
    fn dim_expr(&self, e: &Expr) -> Result<(ReshapeDim<SymDim>, TokenStream)> {
        if let Ok(n) = int_lit(e, "a dim") {
            let t = match n {
                -1 => ReshapeDim::Infer,
                n if n < 0 => ReshapeDim::Negative(n as isize),
                n => ReshapeDim::Size(SymDim::constant(n)),
            };
            let g = g();
            return Ok((t, quote!(&[#g::DimTok::Lit(#n)])));
        }
        let mut toks = Vec::new();
        let d = self.sym_dim(e, &mut toks)?;
        Ok((ReshapeDim::Size(d), quote!(&[#(#toks),*])))
    }

    /// A dim expression's value; appends its postfix tokens to `toks`.
    fn sym_dim(&self, e: &Expr, toks: &mut Vec<TokenStream>) -> Result<SymDim> {
        let g = g();
        match e {
            Expr::Paren(p) => self.sym_dim(&p.expr, toks),
            Expr::Lit(_) => {
                let n = int_lit(e, "a dim")?;
                toks.push(quote!(#g::DimTok::Lit(#n)));
                Ok(SymDim::constant(n))
            }
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let id = p.path.get_ident().expect("checked above").to_string();
                let i = self.dims.iter().position(|d| *d == id).ok_or_else(|| {
                    Error::new_spanned(
                        e,
                        format!("unknown dim `{id}` (dims are the names of the signature)"),
                    )
                })?;
                let i = i as u32;
                toks.push(quote!(#g::DimTok::Name(#i)));
                Ok(SymDim::name(&id))
            }
            Expr::Binary(b) => {
                let l = self.sym_dim(&b.left, toks)?;
                let r = self.sym_dim(&b.right, toks)?;
                let over = || Error::new_spanned(e, "the dim overflows");
                let (v, tok) = match b.op {
                    BinOp::Add(_) => (l.plus(&r).ok_or_else(over)?, quote!(Add)),
                    BinOp::Sub(_) => (l.minus(&r).ok_or_else(over)?, quote!(Sub)),
                    BinOp::Mul(_) => (l.times(&r).ok_or_else(over)?, quote!(Mul)),
                    BinOp::Div(_) => match r.as_const() {
                        Some(k) if k > 0 => (l.div_floor(k), quote!(Div)),
                        _ => {
                            return Err(Error::new_spanned(
                                &b.right,
                                "a dim can only be divided by a positive literal",
                            ))
                        }
                    },
                    _ => return Err(Error::new_spanned(b.op, "dims use + - * /")),
                };
                toks.push(quote!(#g::DimTok::#tok));
                Ok(v)
            }
            _ => Err(Error::new_spanned(
                e,
                "a dim is a literal, a signature name, or + - * / of those",
            )),
        }
    }

    /// `layer(x)` in a `model!` body.
    fn layer_call(&mut self, c: &syn::ExprCall) -> Result<Val> {
        let whole = Expr::Call(c.clone());
        let Expr::Path(p) = &*c.func else {
            return Err(Error::new_spanned(&c.func, "only layers can be called"));
        };
        let id = p
            .path
            .get_ident()
            .ok_or_else(|| Error::new_spanned(p, "expected a layer name"))?
            .to_string();
        let Some(layer) = self.layers.get(&id).cloned() else {
            return Err(Error::new_spanned(&c.func, format!("unknown layer `{id}`")));
        };
        if c.args.len() != 1 {
            return Err(Error::new_spanned(
                &whole,
                format!("layer `{id}` takes 1 argument, got {}", c.args.len()),
            ));
        }
        let arg = &c.args[0];
        let (dt, s, x) = self.tensor(arg)?;
        let out = layer.spec.output(&id, dt, &s).map_err(|e| {
            if !e.width {
                return Error::new_spanned(arg, &e.message);
            }
            // The declared width may be the mistake: the error is at the
            // declaration, with a note at the use.
            let mut at_decl = Error::new_spanned(&layer.decl, &e.message);
            at_decl.combine(Error::new_spanned(
                arg,
                format!(
                    "note: the input of `{id}` ({}) is {} here",
                    layer.spec,
                    shape_text(&s)
                ),
            ));
            at_decl
        })?;
        let i = match self.used_layers.iter().position(|l| *l == id) {
            Some(i) => i,
            None => {
                self.used_layers.push(id);
                self.used_layers.len() - 1
            }
        } as u32;
        Ok(self.bind(out.0, out.1, quote!(Layer(#i)), &[x]))
    }
}

/// Checks a result value against the declared type; the error spans the
/// body's final expression.
pub fn check_result(v: &Val, last: &Expr, dtype: ScalarType, shape: &[SymDim]) -> Result<()> {
    match &v.ty {
        Ty::Tensor(t, s) => {
            if *t != dtype {
                return Err(Error::new_spanned(
                    last,
                    format!(
                        "result dtype mismatch: the body gives {t} but the signature says {dtype}"
                    ),
                ));
            }
            if s.as_slice() != shape {
                return Err(Error::new_spanned(
                    last,
                    format!(
                        "result shape mismatch: the body gives {} but the signature says {}",
                        shape_text(s),
                        shape_text(shape)
                    ),
                ));
            }
            Ok(())
        }
        _ => Err(Error::new_spanned(
            last,
            "the result must be a tensor, not a literal",
        )),
    }
}
