//! Method calls and operators in a kernel body (`x.relu()`, `x.sum([1],
//! false)`, `a + b`): the op table's entry of the method
//! (`morok_core::tensor_ops`) says how to read each argument and gives the
//! result's element type and shape; the call becomes one `Op` node.
//!
//! Two rules are the DSL's own, stricter than the tensor API's: tensor
//! operands of one op have one element type (no promotion), and a literal
//! operand fits it (a float literal needs a float tensor).

use super::arguments::Checked;
use super::*;
use morok_core::tensor_ops::{ArgKind, ArgValue, DTypeRule, OpError, OpSpec, ShapeRule, OPS};

/// The closest method name to `name`, when it is close (a typo).
fn closest(name: &str) -> Option<&'static str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, &cb) in b.iter().enumerate() {
                let next = (row[j + 1] + 1)
                    .min(row[j] + 1)
                    .min(prev + usize::from(ca != cb));
                prev = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    };
    OPS.iter()
        .map(|s| (distance(name, s.name), s.name))
        .filter(|&(d, n)| d <= 2 && d < n.len())
        .min()
        .map(|(_, n)| n)
}

impl Ctx<'_> {
    /// A method call on a tensor.
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall) -> Result<Val> {
        self.method_output(m, None)
    }

    /// `.0` or `.1` of a method call returning a pair (`x.sort(1,
    /// false).1`).
    pub(super) fn field(&mut self, f: &syn::ExprField) -> Result<Val> {
        let k = match &f.member {
            syn::Member::Unnamed(i) if i.index <= 1 => i.index as u8,
            _ => {
                return Err(Error::new_spanned(
                    &f.member,
                    "only `.0` and `.1` of a method returning a pair are allowed",
                ))
            }
        };
        match &*f.base {
            Expr::MethodCall(m) => self.method_output(m, Some(k)),
            Expr::Paren(p) => match &*p.expr {
                Expr::MethodCall(m) => self.method_output(m, Some(k)),
                other => Err(Error::new_spanned(
                    other,
                    "`.0` and `.1` take a result of a method returning a pair",
                )),
            },
            other => Err(Error::new_spanned(
                other,
                "`.0` and `.1` take a result of a method returning a pair",
            )),
        }
    }

    /// A method call; `output` is the `.0`/`.1` taken of it.
    fn method_output(&mut self, m: &syn::ExprMethodCall, output: Option<u8>) -> Result<Val> {
        let name = m.method.to_string();
        let whole: Expr = Expr::MethodCall(m.clone());
        let Some(spec) = OpSpec::named(&name) else {
            let hint = closest(&name).map_or(String::new(), |n| format!("; did you mean `{n}`?"));
            return Err(Error::new_spanned(
                &m.method,
                format!(
                    "unknown method `{name}`: a kernel body may call the methods listed in \
                     docs/DSL.md{hint}"
                ),
            ));
        };
        if spec.is_function() {
            return Err(Error::new_spanned(
                &m.method,
                format!(
                    "`{name}` is a function of a list of tensors: write `{}(..)`",
                    spec.call_form()
                ),
            ));
        }
        match (spec.second.is_some(), output) {
            (true, None) => {
                return Err(Error::new_spanned(
                    m,
                    format!("`{name}` returns a pair: take `.0` or `.1` of it"),
                ))
            }
            (false, Some(k)) => {
                return Err(Error::new_spanned(
                    m,
                    format!("`{name}` returns one tensor, which has no `.{k}`"),
                ))
            }
            _ => {}
        }
        if m.args.len() != spec.args.len() {
            return Err(arity_error(spec, &whole, m.args.len()));
        }
        let recv = self.expr(&m.receiver)?;
        if !matches!(recv.ty, Ty::Tensor(..)) {
            return Err(Error::new_spanned(
                &m.receiver,
                "expected a tensor, found a literal",
            ));
        }
        let args: Vec<&Expr> = m.args.iter().collect();
        let checked = spec
            .args
            .iter()
            .zip(&args)
            .map(|(a, e)| self.argument(spec.name, a.kind, a.name, e))
            .collect::<Result<Vec<_>>>()?;
        self.apply(spec, &whole, recv, checked, &args, output)
    }

    /// A function of a list of tensors (`Tensor::cat([a, b], 0)`,
    /// `Tensor::einsum("ij,jk->ik", [a, b])`): the list's first tensor is
    /// the op's receiver, the rest its list argument.
    pub(super) fn function_call(&mut self, c: &syn::ExprCall, name: &str) -> Result<Val> {
        let whole = Expr::Call(c.clone());
        let Some(spec) = OpSpec::named(name).filter(|s| s.is_function()) else {
            let known: Vec<String> = OPS
                .iter()
                .filter(|s| s.is_function())
                .map(|s| format!("`{}`", s.call_form()))
                .collect();
            return Err(Error::new_spanned(
                &c.func,
                format!(
                    "unknown function `Tensor::{name}`: a kernel body may call {}",
                    known.join(", ")
                ),
            ));
        };
        if c.args.len() != spec.args.len() {
            return Err(arity_error(spec, &whole, c.args.len()));
        }
        let args: Vec<&Expr> = c.args.iter().collect();
        let mut checked = spec
            .args
            .iter()
            .zip(&args)
            .map(|(a, e)| self.argument(spec.name, a.kind, a.name, e))
            .collect::<Result<Vec<_>>>()?;
        let list = checked
            .iter_mut()
            .find(|a| a.kind == ArgKind::Tensors)
            .expect("a function has a list of tensors");
        let ArgValue::Tensors(types) = &mut list.value else {
            return Err(Error::new_spanned(&whole, "a list of tensors was expected"));
        };
        let (t, s) = types.remove(0);
        let r = list.list.remove(0);
        let recv = Val {
            ty: Ty::Tensor(t, s),
            r,
        };
        self.apply(spec, &whole, recv, checked, &args, None)
    }

    /// A binary operator or comparison (`a + b`, `a < b`) of two values,
    /// as the op table's entry `op`; literals on both sides fold.
    pub(super) fn binary(&mut self, whole: &Expr, op: &str, l: Val, r: Val) -> Result<Val> {
        if !matches!(l.ty, Ty::Tensor(..)) && !matches!(r.ty, Ty::Tensor(..)) {
            return fold(whole, op, l, r);
        }
        let spec = OpSpec::named(op)
            .ok_or_else(|| Error::new_spanned(whole, format!("no op `{op}` in the op table")))?;
        let arg = Checked {
            kind: ArgKind::Operand,
            list: Vec::new(),
            value: arg_value(&r.ty, r.r),
            operand: Some(r.r),
            lit: None,
        };
        self.apply(spec, whole, l, vec![arg], &[], None)
    }

    /// `-x` of a tensor.
    pub(super) fn negate(&mut self, whole: &Expr, v: Val) -> Result<Val> {
        let spec = OpSpec::named("neg").expect("neg is in the op table");
        self.apply(spec, whole, v, Vec::new(), &[], None)
    }

    /// Checks `spec` on the receiver `recv` (a tensor, or the literal left
    /// operand of an operator) and the checked arguments, and adds its
    /// node. `exprs` are the argument expressions of a method call (for
    /// error spans; empty for operators); `output` is the `.0`/`.1` taken
    /// of an op returning a pair.
    fn apply(
        &mut self,
        spec: &OpSpec,
        whole: &Expr,
        recv: Val,
        args: Vec<Checked>,
        exprs: &[&Expr],
        output: Option<u8>,
    ) -> Result<Val> {
        let op = spec.error_name();
        // The element type every tensor operand has and every literal fits:
        // the receiver's, or for `where_` (whose receiver is the
        // condition) the first tensor branch's.
        let mut operand_type = None;
        let mut shape_of_literal_recv = None;
        if spec.dtype != DTypeRule::Branch {
            if let Ty::Tensor(t, s) = &recv.ty {
                operand_type = Some(*t);
                shape_of_literal_recv = Some(s.clone());
            }
        }
        // Index and mask tensors have their own types; a class loss'
        // weight has the receiver's.
        let operands = args.iter().filter_map(|a| match (a.kind, &a.value) {
            (
                ArgKind::Tensor | ArgKind::Operand | ArgKind::OptionalTensor,
                ArgValue::Tensor(t, s),
            )
            | (
                ArgKind::ClassLossOptions,
                ArgValue::ClassLoss {
                    weight: Some((t, s)),
                    ..
                },
            ) => Some(vec![(t, s)]),
            (ArgKind::Tensors, ArgValue::Tensors(list)) => {
                Some(list.iter().map(|(t, s)| (t, s)).collect())
            }
            _ => None,
        });
        for (t, s) in operands.flatten() {
            match operand_type {
                None => {
                    operand_type = Some(*t);
                    if shape_of_literal_recv.is_none() {
                        shape_of_literal_recv = Some(s.clone());
                    }
                }
                Some(u) if u != *t => {
                    return Err(Error::new_spanned(
                        whole,
                        format!(
                            "{op}: dtype mismatch: {u} and {t} (the DSL does not promote; \
                             add a `.cast(..)`)"
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        let Some(operand_type) = operand_type else {
            let e = OpError::Argument {
                op: op.to_string(),
                reason: "give at least one tensor branch".to_string(),
            };
            return Err(Error::new_spanned(whole, e.to_string()));
        };
        // Literal operands (and a literal receiver) fit the operand type.
        let literal_types = std::iter::once(&recv.ty)
            .filter(|t| !matches!(t, Ty::Tensor(..)))
            .cloned()
            .chain(
                args.iter()
                    .filter(|a| a.operand.is_some())
                    .filter_map(|a| match a.value {
                        ArgValue::Float(_) => Some(Ty::Float),
                        ArgValue::Int(_) => Some(Ty::Int),
                        ArgValue::Bool(_) => Some(Ty::Bool),
                        _ => None,
                    }),
            );
        for lit in literal_types {
            let fits = match lit {
                Ty::Float => operand_type.is_float(),
                Ty::Int => !operand_type.is_bool(),
                _ => operand_type.is_bool(),
            };
            if !fits {
                let name = match lit {
                    Ty::Float => "a float literal",
                    Ty::Int => "an integer literal",
                    _ => "a bool literal",
                };
                return Err(Error::new_spanned(
                    whole,
                    format!("{op}: dtype mismatch: {operand_type} tensor and {name} (add a `.cast(..)`)"),
                ));
            }
        }
        let (recv_type, recv_shape) = match &recv.ty {
            Ty::Tensor(t, s) => (*t, s.clone()),
            _ => (operand_type, shape_of_literal_recv.unwrap_or_default()),
        };
        let values: Vec<ArgValue<SymDim>> = args.iter().map(|a| a.value.clone()).collect();
        let which = usize::from(output.unwrap_or(0));
        let infer = spec.infer_output(recv_type, &recv_shape, &values, which);
        let (dtype, shape) = infer.map_err(|e| {
            // An axis the rule rejects is underlined where it is written.
            let at = match (&e, spec.shape) {
                (
                    OpError::Shape(_),
                    ShapeRule::Axis(i)
                    | ShapeRule::Axes(i)
                    | ShapeRule::ReduceAxis(i)
                    | ShapeRule::Reduce { axes: i, .. },
                ) => exprs.get(i).copied(),
                _ => None,
            };
            match at {
                Some(arg) => Error::new_spanned(arg, e.to_string()),
                None => Error::new_spanned(whole, e.to_string()),
            }
        })?;
        let g = g();
        let id = format_ident!("{}", format!("{:?}", spec.id));
        let lits = args.iter().filter_map(|a| a.lit.clone());
        let operands: Vec<Ref> = std::iter::once(recv.r)
            .chain(
                args.iter()
                    .flat_map(|a| a.operand.into_iter().chain(a.list.iter().copied())),
            )
            .collect();
        let op = match output {
            Some(k) => quote!(Pair(#g::OpId::#id, &[#(#lits),*], #k)),
            None => quote!(Op(#g::OpId::#id, &[#(#lits),*])),
        };
        Ok(self.bind(dtype, shape.to_vec(), op, &operands))
    }
}

/// The error of a call of `spec` with `got` arguments: the declared ones
/// with their literal forms.
fn arity_error(spec: &OpSpec, whole: &Expr, got: usize) -> Error {
    let what: Vec<String> = spec
        .args
        .iter()
        .map(|a| format!("{}: {}", a.name, a.kind.literal_form()))
        .collect();
    Error::new_spanned(
        whole,
        format!(
            "`{}` takes {} argument(s) ({}), got {got}",
            spec.call_form(),
            spec.args.len(),
            if what.is_empty() {
                "none".to_string()
            } else {
                what.join(", ")
            },
        ),
    )
}

/// What the rules see of an operand: a tensor's type and shape, or a
/// literal.
pub(super) fn arg_value(ty: &Ty, r: Ref) -> ArgValue<SymDim> {
    match (ty, r) {
        (Ty::Tensor(t, s), _) => ArgValue::Tensor(*t, s.clone()),
        (_, Ref::F(v)) => ArgValue::Float(v),
        (_, Ref::I(v)) => ArgValue::Int(v),
        (_, Ref::B(v)) => ArgValue::Bool(v),
        (_, Ref::Node(_)) => ArgValue::Bool(false),
    }
}

/// `op` of two literals, folded (`2.0 * 3`): arithmetic only.
fn fold(whole: &Expr, op: &str, l: Val, r: Val) -> Result<Val> {
    if !matches!(op, "add" | "sub" | "mul" | "div") {
        return Err(Error::new_spanned(
            whole,
            format!("{op}: needs at least one tensor operand"),
        ));
    }
    let ty = match (&l.ty, &r.ty) {
        (Ty::Int, Ty::Int) => Ty::Int,
        (Ty::Float | Ty::Int, Ty::Float | Ty::Int) => Ty::Float,
        _ => {
            return Err(Error::new_spanned(
                whole,
                format!("{op}: needs at least one tensor operand"),
            ))
        }
    };
    let over = || Error::new_spanned(whole, format!("{op}: the literal overflows"));
    let as_f64 = |r: Ref| match r {
        Ref::F(v) => v,
        Ref::I(v) => v as f64,
        _ => 0.0,
    };
    let r = match (&ty, l.r, r.r) {
        (Ty::Int, Ref::I(a), Ref::I(b)) => Ref::I(
            match op {
                "add" => a.checked_add(b),
                "sub" => a.checked_sub(b),
                "mul" => a.checked_mul(b),
                _ => a.checked_div(b),
            }
            .ok_or_else(over)?,
        ),
        (_, a, b) => {
            let (a, b) = (as_f64(a), as_f64(b));
            finite(
                whole,
                match op {
                    "add" => a + b,
                    "sub" => a - b,
                    "mul" => a * b,
                    _ => a / b,
                },
            )?
        }
    };
    Ok(Val { ty, r })
}
