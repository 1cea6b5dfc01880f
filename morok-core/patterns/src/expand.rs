//! From the syntax tree to a flat list of concrete rules: runs the checks
//! of [`crate::check`] on every rule and template (collecting all errors),
//! and instantiates template bodies once per op.

use crate::ast::{Input, Item, Node, Pattern, Rule};
use crate::bindings::Bindings;
use crate::check::{self, Scope};
use proc_macro2::{Ident, Span};
use std::rc::Rc;
use syn::{Error, Result};

/// A rule ready for code generation: no template variables left.
pub struct Concrete<'a> {
    /// The rule as written (guard, arrow and right-hand side).
    pub rule: &'a Rule,
    /// The pattern with template variables replaced by ops.
    pub pattern: Pattern,
    /// The op the root must have, or `None` for a rule tried on every node.
    pub dispatch: Option<Ident>,
    /// The enclosing templates' op variables and their op in this
    /// instance, outermost first.
    pub op_vars: Vec<(Ident, Ident)>,
    /// The pattern's bindings (shared by all instances of a template).
    pub bindings: Rc<Bindings>,
}

/// Checks the input and expands templates; on failure, every error found.
pub fn expand(input: &Input) -> Result<Vec<Concrete<'_>>> {
    let mut out = Vec::new();
    let mut errors = None;
    walk(&input.items, &mut Vec::new(), &mut out, &mut errors);
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn walk<'a>(
    items: &'a [Item],
    scopes: &mut Vec<Scope<'a>>,
    out: &mut Vec<Concrete<'a>>,
    errors: &mut Option<Error>,
) {
    for item in items {
        let result = match item {
            Item::Template(t) => check::template(t).map(|()| {
                scopes.push(Scope {
                    var: &t.var,
                    ops: &t.ops,
                });
                walk(&t.items, scopes, out, errors);
                scopes.pop();
            }),
            Item::Rule(rule) => instances(rule, scopes).map(|rules| out.extend(rules)),
        };
        if let Err(e) = result {
            match errors {
                Some(all) => all.combine(e),
                None => *errors = Some(e),
            }
        }
    }
}

/// Checks a rule and instantiates it for every combination of the
/// enclosing templates' ops.
fn instances<'a>(rule: &'a Rule, scopes: &[Scope<'a>]) -> Result<Vec<Concrete<'a>>> {
    check::pattern(&rule.pattern, scopes)?;
    let vars: Vec<&Ident> = scopes.iter().map(|s| s.var).collect();
    let bindings = Rc::new(Bindings::of(&rule.pattern, &vars)?);
    check::rhs(&rule.rhs, &bindings, scopes)?;

    let mut assignments: Vec<Vec<(Ident, Ident)>> = vec![Vec::new()];
    for scope in scopes {
        assignments = assignments
            .into_iter()
            .flat_map(|prefix| {
                scope.ops.iter().map(move |op| {
                    let mut a = prefix.clone();
                    a.push((scope.var.clone(), op.clone()));
                    a
                })
            })
            .collect();
    }
    Ok(assignments
        .into_iter()
        .map(|op_vars| {
            let pattern = substitute(&rule.pattern, &op_vars);
            Concrete {
                rule,
                dispatch: root_op(&pattern),
                pattern,
                op_vars,
                bindings: bindings.clone(),
            }
        })
        .collect())
}

/// `pattern` with op variables replaced (the innermost template wins).
fn substitute(pattern: &Pattern, op_vars: &[(Ident, Ident)]) -> Pattern {
    match pattern {
        Pattern::Bind(name, sub) => Pattern::Bind(name.clone(), Box::new(substitute(sub, op_vars))),
        Pattern::Node(node) => Pattern::Node(Node {
            op: match op_vars.iter().rev().find(|(var, _)| *var == node.op) {
                Some((_, op)) => Ident::new(&op.to_string(), node.op.span()),
                None => node.op.clone(),
            },
            operands: node
                .operands
                .iter()
                .map(|p| substitute(p, op_vars))
                .collect(),
            rest: node.rest,
            commutative: node.commutative,
            span: node.span,
        }),
        other => other.clone(),
    }
}

/// The op a node must have to match `pattern`, if it is fixed.
fn root_op(pattern: &Pattern) -> Option<Ident> {
    match pattern {
        Pattern::Node(node) => Some(node.op.clone()),
        Pattern::Const(_) | Pattern::Literal(_) => Some(Ident::new("Const", Span::call_site())),
        Pattern::Bind(_, sub) => root_op(sub),
        Pattern::Wild | Pattern::Var(_) => None,
    }
}
