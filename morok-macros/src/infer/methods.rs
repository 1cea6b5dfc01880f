//! Method calls in a kernel body (`x.relu()`, `x.sum(1)`, ...): each
//! method's arguments and shape rule, as the node it adds.

use super::*;

impl Ctx<'_> {
    fn arity(m: &syn::ExprMethodCall, n: usize, what: &str) -> Result<()> {
        if m.args.len() != n {
            return Err(Error::new_spanned(
                m,
                format!(
                    "`{}` takes {n} argument(s) ({what}), got {}",
                    m.method,
                    m.args.len()
                ),
            ));
        }
        Ok(())
    }

    /// A method call on a tensor.
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall) -> Result<Val> {
        let name = m.method.to_string();
        let whole: Expr = Expr::MethodCall(m.clone());
        let known = METHODS.split(", ").any(|k| k == name);
        if !known {
            return Err(Error::new_spanned(
                &m.method,
                format!("unknown method `{name}` (a kernel body may call: {METHODS})"),
            ));
        }
        let (dt, s, x) = self.tensor(&m.receiver)?;
        let args: Vec<&Expr> = m.args.iter().collect();
        let g = g();
        let need_float = |what: &str| -> Result<()> {
            if dt.is_float() {
                Ok(())
            } else {
                Err(Error::new_spanned(
                    &whole,
                    format!("{what}: needs a float tensor, got {dt} (add a `.cast(f32)`)"),
                ))
            }
        };
        match name.as_str() {
            "dot" | "matmul" => {
                Self::arity(m, 1, "the other matrix")?;
                let (dt2, s2, y) = self.tensor(args[0])?;
                if dt != dt2 {
                    return Err(Error::new_spanned(&whole, format!("matmul: dtype mismatch: {dt} and {dt2} (the DSL does not promote; add a `.cast(..)`)")));
                }
                let out = shape::matmul_shape(&s, &s2).map_err(|e| shape_error(&whole, e))?;
                let op = if name == "dot" {
                    quote!(Dot)
                } else {
                    quote!(Matmul)
                };
                Ok(self.bind(dt, out.to_vec(), op, &[x, y]))
            }
            n if FLOAT_UNARY.contains(&n) || ANY_UNARY.contains(&n) => {
                Self::arity(m, 0, "none")?;
                if FLOAT_UNARY.contains(&n) {
                    need_float(n)?;
                }
                let u = variant(n);
                Ok(self.bind(dt, s, quote!(Unary(#g::Unary::#u)), &[x]))
            }
            "softmax" | "log_softmax" => {
                Self::arity(m, 1, "the axis")?;
                need_float(&name)?;
                let a = axis(args[0])?;
                shape::normalize_axis(&name, &s, a).map_err(|e| shape_error(args[0], e))?;
                let op = if name == "softmax" {
                    quote!(Softmax(#a))
                } else {
                    quote!(LogSoftmax(#a))
                };
                Ok(self.bind(dt, s, op, &[x]))
            }
            "sum" | "mean" | "max" | "min" => {
                Self::arity(m, 2, "the axes list and keepdim")?;
                if matches!(name.as_str(), "sum" | "mean") {
                    need_float(&name)?;
                }
                let axes: Vec<isize> = axes_list(args[0])?;
                let keep = bool_lit(args[1], "keepdim")?;
                let norm = shape::reduce_axes(&name, &s, Some(&axes))
                    .map_err(|e| shape_error(args[0], e))?;
                let out = shape::reduce_shape(&s, &norm, keep);
                let r = variant(&name);
                Ok(self.bind(
                    dt,
                    out.to_vec(),
                    quote!(Reduce(#g::Reduce::#r, &[#(#axes),*], #keep)),
                    &[x],
                ))
            }
            "argmax" => {
                Self::arity(m, 1, "the axis")?;
                let a = axis(args[0])?;
                let n =
                    shape::normalize_axis("argmax", &s, a).map_err(|e| shape_error(args[0], e))?;
                let out = shape::reduce_shape(&s, &[n], false);
                Ok(self.bind(ScalarType::I32, out.to_vec(), quote!(Argmax(#a)), &[x]))
            }
            "layernorm" => {
                Self::arity(m, 2, "the axes list and eps")?;
                need_float(&name)?;
                let axes: Vec<isize> = axes_list(args[0])?;
                let eps = float_lit(args[1], "eps")?;
                shape::reduce_axes("layernorm", &s, Some(&axes))
                    .map_err(|e| shape_error(args[0], e))?;
                if !eps.is_finite() {
                    return Err(Error::new_spanned(args[1], "eps overflows"));
                }
                Ok(self.bind(dt, s, quote!(LayerNorm(&[#(#axes),*], #eps)), &[x]))
            }
            "reshape" => {
                Self::arity(m, 1, "the new dims")?;
                let (target, codes) = self.dim_list(args[0])?;
                let out = shape::reshape_dims(&s, &target).map_err(|e| shape_error(&whole, e))?;
                Ok(self.bind(dt, out.to_vec(), quote!(Reshape(&[#(#codes),*])), &[x]))
            }
            "transpose" => {
                Self::arity(m, 2, "two axes")?;
                let (a, b) = (axis(args[0])?, axis(args[1])?);
                let (_, out) =
                    shape::transpose_shape(&s, a, b).map_err(|e| shape_error(&whole, e))?;
                Ok(self.bind(dt, out.to_vec(), quote!(Transpose(#a, #b)), &[x]))
            }
            "permute" => {
                Self::arity(m, 1, "the axes list")?;
                let perm: Vec<isize> = axes_list(args[0])?;
                let (_, out) =
                    shape::permute_shape(&s, &perm).map_err(|e| shape_error(&whole, e))?;
                Ok(self.bind(dt, out.to_vec(), quote!(Permute(&[#(#perm),*])), &[x]))
            }
            "expand" => {
                Self::arity(m, 1, "the new dims")?;
                let (dims, codes) = self.dim_list(args[0])?;
                let mut target = Vec::new();
                for (d, e) in dims.into_iter().zip(list_elems(args[0])) {
                    target.push(match d {
                        ReshapeDim::Size(d) => Some(d),
                        ReshapeDim::Infer => None,
                        ReshapeDim::Negative(n) => {
                            return Err(Error::new_spanned(
                                e,
                                format!("expand: dimension {n} is negative"),
                            ))
                        }
                    });
                }
                let out = shape::expand_shape(&s, &target).map_err(|e| shape_error(&whole, e))?;
                Ok(self.bind(dt, out.to_vec(), quote!(Expand(&[#(#codes),*])), &[x]))
            }
            "cast" => {
                Self::arity(m, 1, "the element type")?;
                let syn::Expr::Path(p) = args[0] else {
                    return Err(Error::new_spanned(
                        args[0],
                        "expected an element type such as `f16`",
                    ));
                };
                let id = p.path.get_ident().ok_or_else(|| {
                    Error::new_spanned(p, "expected an element type such as `f16`")
                })?;
                let to = crate::sig::dtype_named(id)?;
                let tt = crate::sig::dtype_tokens(to);
                Ok(self.bind(to, s, quote!(Cast(#tt)), &[x]))
            }
            "where_" => {
                Self::arity(m, 2, "the values where true and where false")?;
                if dt != ScalarType::Bool {
                    return Err(Error::new_spanned(
                        &m.receiver,
                        format!("where: the condition must be a bool tensor, got {dt}"),
                    ));
                }
                let a = self.expr(args[0])?;
                let b = self.expr(args[1])?;
                let (vt, mut out) = match (&a.ty, &b.ty) {
                    (Ty::Tensor(ta, sa), Ty::Tensor(tb, sb)) => {
                        if ta != tb {
                            return Err(Error::new_spanned(
                                &whole,
                                format!("where: dtype mismatch: {ta} and {tb} (add a `.cast(..)`)"),
                            ));
                        }
                        (
                            *ta,
                            shape::broadcast_shapes("where", sa, sb)
                                .map_err(|e| shape_error(&whole, e))?
                                .to_vec(),
                        )
                    }
                    (Ty::Tensor(t, sa), _) | (_, Ty::Tensor(t, sa)) => (*t, sa.clone()),
                    _ => (ScalarType::F32, Vec::new()),
                };
                if !matches!((&a.ty, &b.ty), (Ty::Tensor(..), _) | (_, Ty::Tensor(..))) {
                    return Err(Error::new_spanned(
                        &whole,
                        "where: give at least one tensor branch",
                    ));
                }
                out = shape::broadcast_shapes("where", &s, &out)
                    .map_err(|e| shape_error(&whole, e))?
                    .to_vec();
                Ok(self.bind(vt, out, quote!(Where), &[x, a.r, b.r]))
            }
            "maximum" | "minimum" | "lt" | "le" | "gt" | "ge" | "eq" | "ne" => {
                Self::arity(m, 1, "the other operand")?;
                let r = self.expr(args[0])?;
                let l = Val {
                    ty: Ty::Tensor(dt, s),
                    r: x,
                };
                self.binary(&whole, &name, l, r)
            }
            _ => Err(Error::new_spanned(
                &m.method,
                format!("unknown method `{name}`"),
            )),
        }
    }
}
