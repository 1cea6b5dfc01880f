//! Code generation: one `PatternMatcher::rule` call per concrete rule.
//!
//! A rule becomes a closure registered for its root op (or for every op).
//! Its body is a nest of `if`s over the node: operand slices are
//! destructured with slice patterns (which check the length), then ops,
//! constants and repeated names are compared depth first; a commutative
//! node emits the rest of the match once per operand order, so a failure
//! anywhere after it (including a `=>` rhs returning `None`) falls through
//! to the other order. The guard and the right-hand side are closures
//! defined once per rule and called where the match succeeds. The no-match
//! path reads the node and allocates nothing.
//!
//! Internal names use mixed-site hygiene, so they cannot clash with user
//! names; binding names keep the user's spans so the rhs sees them.

use crate::ast::{Arrow, Input, Literal, Node, Pattern, Rhs};
use crate::bindings::CTX;
use crate::expand::Concrete;
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

/// The expression that builds the matcher.
pub fn matcher(input: &Input, rules: &[Concrete]) -> TokenStream {
    let ctx_ty = match &input.context {
        Some(ty) => ty.to_token_stream(),
        None => quote!(()),
    };
    let name = match &input.name {
        Some(name) => name.to_token_stream(),
        None => quote!(::std::concat!(
            "patterns!@",
            ::std::file!(),
            ":",
            ::std::line!()
        )),
    };
    let new = quote!(::morok_core::rewrite::PatternMatcher::<#ctx_ty>::new(#name));
    if rules.is_empty() {
        return new;
    }
    let pm = internal("pm");
    let rules = rules.iter().map(|r| rule(r, &ctx_ty, &pm));
    quote!({
        let mut #pm = #new;
        #(#rules)*
        #pm
    })
}

/// A name only generated code can see.
fn internal(name: &str) -> Ident {
    Ident::new(&format!("__{name}"), Span::mixed_site())
}

/// What a binding holds.
#[derive(Clone, Copy)]
enum Kind {
    /// A node: `&Arc<UOp>`.
    Node,
    /// A constant value: `ConstValue`.
    Value,
}

/// The names a guard or right-hand side closure receives.
struct Params {
    /// Bindings, in pattern order.
    bindings: Vec<(Ident, Kind)>,
    /// Whether it takes `ctx`.
    ctx: bool,
}

fn rule(r: &Concrete, ctx_ty: &TokenStream, pm: &Ident) -> TokenStream {
    let node = internal("node");
    let ctx_in = internal("ctx");
    let bodies = Bodies::new(r, ctx_ty);
    let finish = |env: &Env| bodies.on_match(env, &ctx_in);
    let mut emit = Emit {
        finish: &finish,
        fresh: 0,
    };
    let root = Task {
        node: node.clone(),
        pattern: &r.pattern,
        dispatched: r.dispatch.is_some(),
    };
    let matching = emit.tasks(vec![root], Vec::new());

    let defs = &bodies.defs;
    let ctx_pat = if bodies.uses_ctx() {
        quote!(#ctx_in)
    } else {
        quote!(_)
    };
    let ops = match &r.dispatch {
        Some(op) => quote!(::morok_core::Op::#op),
        None => quote!(),
    };
    // Spanned at the rule, so the matcher records the rule's own line.
    let span = r.rule.pattern_span;
    quote_spanned! {span=>
        #pm.try_rule(
            &[#ops],
            move |#node: &::std::sync::Arc<::morok_core::UOp>, #ctx_pat: &mut #ctx_ty|
                -> ::core::result::Result<
                    ::core::option::Option<::std::sync::Arc<::morok_core::UOp>>,
                    ::morok_core::rewrite::RuleError,
                > {
                #defs
                #matching
                ::core::result::Result::Ok(::core::option::Option::None)
            },
        );
    }
}

/// A rule's guard and right-hand side, as closures defined once at the
/// top of the rule and called wherever the pattern matches.
struct Bodies {
    /// The closure definitions.
    defs: TokenStream,
    /// What the rhs closure takes.
    rhs: Params,
    /// What the guard closure takes, if there is a guard.
    guard: Option<Params>,
    /// The rhs returns a `Result` (`=> try`).
    fails: bool,
}

impl Bodies {
    fn new(r: &Concrete, ctx_ty: &TokenStream) -> Bodies {
        let all: Vec<(Ident, Kind)> = r
            .bindings
            .nodes
            .iter()
            .map(|n| (n.clone(), Kind::Node))
            .chain(r.bindings.values.iter().map(|v| (v.clone(), Kind::Value)))
            .collect();
        let op_lets = |tokens: TokenStream| {
            let lets = r
                .op_vars
                .iter()
                .filter(|(var, _)| mentions(tokens.clone(), &var.to_string()))
                .map(|(var, op)| quote!(let #var: ::morok_core::Op = ::morok_core::Op::#op;));
            quote!(#(#lets)*)
        };

        let body = r.rule.rhs.body();
        let rhs = match &r.rule.rhs {
            Rhs::Expr(e) => mentioned(&all, e.to_token_stream()),
            Rhs::Closure { params, body } => Params {
                bindings: all
                    .iter()
                    .filter(|(n, _)| params.contains(n))
                    .cloned()
                    .collect(),
                ctx: params.iter().any(|p| p == CTX) || mentions(body.to_token_stream(), CTX),
            },
        };
        let option = quote!(::core::option::Option<::std::sync::Arc<::morok_core::UOp>>);
        let (result, ret) = match r.rule.arrow {
            Arrow::Rewrite => (
                quote_spanned!(body.span()=>
                ::core::option::Option::Some(::morok_core::rewrite::IntoUOp::into_uop(#body))),
                option,
            ),
            Arrow::Fallible => (
                quote_spanned!(body.span()=>
                ::core::option::Option::map(#body, ::morok_core::rewrite::IntoUOp::into_uop)),
                option,
            ),
            Arrow::Try => (
                {
                    // Bound first: a block rhs is not a `match` scrutinee.
                    let (res, ok, err) = (internal("result"), internal("ok"), internal("err"));
                    quote_spanned!(body.span()=> {
                        let #res = #body;
                        match #res {
                            ::core::result::Result::Ok(#ok) => ::core::result::Result::Ok(
                                ::core::option::Option::map(#ok, ::morok_core::rewrite::IntoUOp::into_uop)),
                            ::core::result::Result::Err(#err) => ::core::result::Result::Err(
                                ::core::convert::Into::<::morok_core::rewrite::RuleError>::into(#err)),
                        }
                    })
                },
                quote!(::core::result::Result<#option, ::morok_core::rewrite::RuleError>),
            ),
        };
        let (rhs_fn, decl) = (internal("rhs"), closure_params(&rhs, ctx_ty));
        let lets = op_lets(body.to_token_stream());
        let mut defs = quote! {
            let #rhs_fn = |#decl| -> #ret {
                #lets
                #result
            };
        };

        let guard = r.rule.guard.as_ref().map(|g| {
            let params = mentioned(&all, g.to_token_stream());
            let (guard_fn, decl) = (internal("guard"), closure_params(&params, ctx_ty));
            let lets = op_lets(g.to_token_stream());
            defs.extend(quote! {
                let #guard_fn = |#decl| -> bool {
                    #lets
                    #g
                };
            });
            params
        });
        Bodies {
            defs,
            rhs,
            guard,
            fails: r.rule.arrow == Arrow::Try,
        }
    }

    /// Whether either closure takes `ctx`.
    fn uses_ctx(&self) -> bool {
        self.rhs.ctx || self.guard.as_ref().is_some_and(|g| g.ctx)
    }

    /// The code run when the pattern matched with bindings `env`: the guard
    /// (if any), then the rhs; a replacement is returned from the rule.
    fn on_match(&self, env: &Env, ctx_in: &Ident) -> TokenStream {
        let rhs_call = call(&internal("rhs"), &self.rhs, env, ctx_in);
        let new = internal("new");
        let success = if !self.fails {
            quote! {
                if let ::core::option::Option::Some(#new) = #rhs_call {
                    return ::core::result::Result::Ok(::core::option::Option::Some(#new));
                }
            }
        } else {
            quote! {
            match #rhs_call {
                ::core::result::Result::Ok(::core::option::Option::Some(#new)) => {
                    return ::core::result::Result::Ok(::core::option::Option::Some(#new));
                }
                ::core::result::Result::Ok(::core::option::Option::None) => {}
                ::core::result::Result::Err(#new) => return ::core::result::Result::Err(#new),
            }
            }
        };
        match &self.guard {
            Some(params) => {
                let guard_call = call(&internal("guard"), params, env, ctx_in);
                quote!(if #guard_call { #success })
            }
            None => success,
        }
    }
}

/// The bindings (and `ctx`) that `tokens` mentions.
fn mentioned(all: &[(Ident, Kind)], tokens: TokenStream) -> Params {
    Params {
        bindings: all
            .iter()
            .filter(|(n, _)| mentions(tokens.clone(), &n.to_string()))
            .cloned()
            .collect(),
        ctx: mentions(tokens, CTX),
    }
}

/// True if the identifier `name` occurs anywhere in `tokens`, including as
/// an inline format argument (`"{name}"`, `"{name:?}"`). Bindings a guard
/// or rhs never mentions are not passed to it, so they cost nothing and
/// raise no unused-variable warnings.
fn mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(g.stream(), name),
        TokenTree::Literal(lit) => {
            let text = lit.to_string();
            let open = format!("{{{name}");
            text.match_indices(&open)
                .any(|(at, _)| matches!(text[at + open.len()..].chars().next(), Some('}' | ':')))
        }
        TokenTree::Punct(_) => false,
    })
}

/// The parameter list of a guard or rhs closure.
fn closure_params(params: &Params, ctx_ty: &TokenStream) -> TokenStream {
    let bindings = params.bindings.iter().map(|(name, kind)| match kind {
        Kind::Node => quote!(#name: &::std::sync::Arc<::morok_core::UOp>),
        Kind::Value => quote!(#name: ::morok_core::ConstValue),
    });
    let ctx = params.ctx.then(|| {
        let ctx = Ident::new(CTX, Span::call_site());
        quote!(#ctx: &mut #ctx_ty)
    });
    quote!(#(#bindings,)* #ctx)
}

/// A call of a guard or rhs closure with the matched bindings.
fn call(f: &Ident, params: &Params, env: &Env, ctx_in: &Ident) -> TokenStream {
    let args = params.bindings.iter().map(|(name, _)| {
        env.iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, local)| local)
            .expect("every binding is matched before the rule body runs")
    });
    let ctx = params.ctx.then(|| quote!(&mut *#ctx_in));
    quote!(#f(#(#args,)* #ctx))
}

/// Binding name → the generated local holding the node or value.
type Env = Vec<(Ident, Ident)>;

/// A node still to be matched against a pattern.
#[derive(Clone)]
struct Task<'p> {
    /// The local holding the node (`&Arc<UOp>`).
    node: Ident,
    pattern: &'p Pattern,
    /// The matcher dispatched on this node's op already (the root).
    dispatched: bool,
}

/// Emits the matching code of one rule.
struct Emit<'f> {
    /// Emits the code that runs once the whole pattern has matched.
    finish: &'f dyn Fn(&Env) -> TokenStream,
    /// Counter for fresh local names.
    fresh: usize,
}

impl Emit<'_> {
    fn local(&mut self) -> Ident {
        self.fresh += 1;
        internal(&format!("m{}", self.fresh))
    }

    /// Matches the tasks (a stack: the last is matched first), then runs
    /// `finish`.
    fn tasks(&mut self, mut stack: Vec<Task<'_>>, mut env: Env) -> TokenStream {
        let Some(Task {
            node,
            pattern,
            dispatched,
        }) = stack.pop()
        else {
            return (self.finish)(&env);
        };
        match pattern {
            Pattern::Wild => self.tasks(stack, env),
            Pattern::Var(name) => self.bind(name, node, stack, env),
            Pattern::Bind(name, sub) => {
                stack.push(Task {
                    node: node.clone(),
                    pattern: sub,
                    dispatched,
                });
                self.bind(name, node, stack, env)
            }
            Pattern::Const(value) => {
                let local = self.local();
                let check = quote!(::core::option::Option::Some(#local) = #node.const_value());
                if let Some(name) = value {
                    env.push((name.clone(), local));
                }
                let rest = self.tasks(stack, env);
                quote!(if let #check { #rest })
            }
            Pattern::Literal(lit) => {
                let check = match lit {
                    Literal::Zero => quote!(#node.is_zero_const()),
                    Literal::One => quote!(#node.is_one_const()),
                    Literal::True => quote!(#node.const_value()
                        == ::core::option::Option::Some(::morok_core::ConstValue::Bool(true))),
                    Literal::False => quote!(#node.const_value()
                        == ::core::option::Option::Some(::morok_core::ConstValue::Bool(false))),
                };
                let rest = self.tasks(stack, env);
                quote!(if #check { #rest })
            }
            Pattern::Node(n) => {
                let body = self.node(&node, n, stack, env);
                if dispatched {
                    body
                } else {
                    let op = &n.op;
                    quote!(if #node.op() == ::morok_core::Op::#op { #body })
                }
            }
        }
    }

    /// Binds `name` to `node`, or checks it is the node already bound.
    fn bind(
        &mut self,
        name: &Ident,
        node: Ident,
        stack: Vec<Task<'_>>,
        mut env: Env,
    ) -> TokenStream {
        let earlier = env
            .iter()
            .find(|(bound, _)| bound == name)
            .map(|(_, l)| l.clone());
        match earlier {
            Some(earlier) => {
                let rest = self.tasks(stack, env);
                quote!(if ::std::sync::Arc::ptr_eq(#earlier, #node) { #rest })
            }
            None => {
                env.push((name.clone(), node));
                self.tasks(stack, env)
            }
        }
    }

    /// Destructures the operands of a node whose op is known to match.
    fn node<'p>(
        &mut self,
        node: &Ident,
        n: &'p Node,
        stack: Vec<Task<'p>>,
        env: Env,
    ) -> TokenStream {
        // A wildcard operand needs no local, except in a commutative node,
        // where each slot meets both operand patterns.
        let locals: Vec<Option<Ident>> = n
            .operands
            .iter()
            .map(|p| (n.commutative || !matches!(p, Pattern::Wild)).then(|| self.local()))
            .collect();
        let slots = locals.iter().map(|l| match l {
            Some(l) => l.to_token_stream(),
            None => quote!(_),
        });
        let rest = n.rest.then(|| quote!(..));
        let slice = quote!([#(#slots,)* #rest]);

        // Operand tasks for one order; pushed in reverse so the first
        // operand is matched first.
        let with_order = |order: &[usize], stack: &Vec<Task<'p>>| {
            let mut stack = stack.clone();
            for (&slot, pattern) in order.iter().zip(&n.operands).rev() {
                if let Some(local) = &locals[slot] {
                    stack.push(Task {
                        node: local.clone(),
                        pattern,
                        dispatched: false,
                    });
                }
            }
            stack
        };
        let body = if n.commutative {
            let first = self.tasks(with_order(&[0, 1], &stack), env.clone());
            let second = self.tasks(with_order(&[1, 0], &stack), env);
            quote!(#first #second)
        } else {
            let order: Vec<usize> = (0..n.operands.len()).collect();
            self.tasks(with_order(&order, &stack), env)
        };
        quote!(if let #slice = #node.src() { #body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_looks_inside_groups() {
        let tokens = quote!(foo(bar, { baz.qux() }));
        assert!(mentions(tokens.clone(), "baz"));
        assert!(mentions(tokens.clone(), "foo"));
        assert!(!mentions(tokens, "ba"));
    }

    #[test]
    fn mentions_sees_inline_format_arguments() {
        let tokens = quote!(println!("{x} and {yy:?}", w));
        assert!(mentions(tokens.clone(), "x"));
        assert!(mentions(tokens.clone(), "yy"));
        assert!(mentions(tokens.clone(), "w"));
        assert!(!mentions(tokens.clone(), "y"));
        assert!(!mentions(tokens, "q"));
    }
}
