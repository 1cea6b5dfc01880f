//! Checks that need the op table or the bindings: op names, operand
//! counts, commutative arity, template groups and closure parameters.
//! Each error points at the offending tokens.

use crate::ast::{Node, Pattern, Rhs, Template};
use crate::bindings::{Bindings, CTX};
use crate::ops::{self, Group};
use proc_macro2::Ident;
use syn::{Error, Result};

/// An enclosing template, as seen by the patterns of its body.
pub struct Scope<'a> {
    /// The op variable.
    pub var: &'a Ident,
    /// The ops it takes, in order.
    pub ops: &'a [Ident],
}

/// Checks a template's header: the group word is `unary`, `binary`,
/// `ternary` or `any`, and every listed op exists and is in that group.
pub fn template(t: &Template) -> Result<()> {
    let wanted = match t.group.to_string().as_str() {
        "unary" => Some(Group::Unary),
        "binary" => Some(Group::Binary),
        "ternary" => Some(Group::Ternary),
        "any" => None,
        other => {
            return Err(Error::new(
                t.group.span(),
                format!(
                    "unknown op group `{other}`: expected `unary`, `binary`, `ternary` or `any`"
                ),
            ))
        }
    };
    if t.ops.is_empty() {
        return Err(Error::new(t.var.span(), "this `for` lists no ops"));
    }
    for op in &t.ops {
        let group = known_op(op)?;
        if let Some(wanted) = wanted {
            if group != wanted {
                return Err(Error::new(
                    op.span(),
                    format!(
                        "`{op}` is a {} op, but this `for` is over {} ops",
                        group.word(),
                        wanted.word()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Checks every op pattern inside `pattern`; `scopes` are the enclosing
/// templates, innermost last.
pub fn pattern(pattern: &Pattern, scopes: &[Scope]) -> Result<()> {
    match pattern {
        Pattern::Wild | Pattern::Var(_) | Pattern::Const(_) | Pattern::Literal(_) => Ok(()),
        Pattern::Bind(_, sub) => self::pattern(sub, scopes),
        Pattern::Node(node) => {
            self::node(node, scopes)?;
            node.operands
                .iter()
                .try_for_each(|p| self::pattern(p, scopes))
        }
    }
}

fn node(node: &Node, scopes: &[Scope]) -> Result<()> {
    let n = node.operands.len();
    if node.commutative && (n != 2 || node.rest) {
        return Err(Error::new(
            node.span,
            format!(
                "`{}[...]` (commutative) takes exactly 2 operands; use `{}(...)` for an ordered match",
                node.op, node.op
            ),
        ));
    }
    // A template variable stands for each of its ops in turn.
    let candidates: Vec<Ident> = match scopes.iter().rev().find(|s| *s.var == node.op) {
        Some(scope) => scope.ops.to_vec(),
        None => {
            known_op(&node.op)?;
            vec![node.op.clone()]
        }
    };
    for op in &candidates {
        let Some(arity) = ops::group_of(&op.to_string()).and_then(Group::arity) else {
            continue;
        };
        let wrong = if node.rest { n > arity } else { n != arity };
        if wrong {
            let shown = if *op == node.op {
                format!("`{op}`")
            } else {
                format!("`{}` (here `{op}`)", node.op)
            };
            return Err(Error::new(
                node.span,
                format!(
                    "{shown} takes {arity} operand{}, but the pattern has {n}",
                    if arity == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that a closure right-hand side lists only bound names, `ctx`, or
/// op variables, each once.
pub fn rhs(rhs: &Rhs, bindings: &Bindings, scopes: &[Scope]) -> Result<()> {
    let Rhs::Closure { params, .. } = rhs else {
        return Ok(());
    };
    for (i, param) in params.iter().enumerate() {
        if params[..i].contains(param) {
            return Err(Error::new(
                param.span(),
                format!("`{param}` is listed twice"),
            ));
        }
        let known =
            bindings.contains(param) || param == CTX || scopes.iter().any(|s| s.var == param);
        if !known {
            return Err(Error::new(
                param.span(),
                format!("`{param}` is not bound by the pattern; closure parameters must name pattern bindings (or `ctx`)"),
            ));
        }
    }
    Ok(())
}

/// The group of a named op, or an "unknown op" error with a suggestion.
fn known_op(op: &Ident) -> Result<Group> {
    let name = op.to_string();
    ops::group_of(&name).ok_or_else(|| {
        let hint = match ops::suggest(&name) {
            Some(s) => format!("; did you mean `{s}`?"),
            None => String::new(),
        };
        Error::new(op.span(), format!("unknown op `{name}`{hint}"))
    })
}
