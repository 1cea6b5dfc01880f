//! The names a pattern binds, and the rules for binding them.

use crate::ast::{Node, Pattern};
use proc_macro2::Ident;
use syn::{Error, Result};

/// The name of the context parameter visible in guards and right-hand sides.
pub const CTX: &str = "ctx";

/// What a pattern binds, each name once, in order of first occurrence.
#[derive(Default)]
pub struct Bindings {
    /// Names bound to nodes (`x`, `x @ p`): `&Arc<UOp>` in the rhs.
    pub nodes: Vec<Ident>,
    /// Names bound to constant values (`@const(v)`): `ConstValue` in the rhs.
    pub values: Vec<Ident>,
}

impl Bindings {
    /// Collects the bindings of `pattern`. Errors: a name bound twice with
    /// `@` or `@const(..)`, a name used both for a node and a value, and
    /// the reserved names (`ctx`, the op variables of enclosing templates).
    pub fn of(pattern: &Pattern, template_vars: &[&Ident]) -> Result<Bindings> {
        let mut walk = Walk {
            bindings: Bindings::default(),
            at_bound: Vec::new(),
            template_vars,
        };
        walk.pattern(pattern)?;
        Ok(walk.bindings)
    }

    /// True if `name` is bound (to a node or a value).
    pub fn contains(&self, name: &Ident) -> bool {
        self.nodes.iter().chain(&self.values).any(|b| b == name)
    }
}

struct Walk<'a> {
    bindings: Bindings,
    /// Names bound with `@` so far.
    at_bound: Vec<Ident>,
    template_vars: &'a [&'a Ident],
}

impl Walk<'_> {
    fn pattern(&mut self, pattern: &Pattern) -> Result<()> {
        match pattern {
            Pattern::Wild | Pattern::Literal(_) | Pattern::Const(None) => Ok(()),
            Pattern::Var(name) => self.node(name),
            Pattern::Bind(name, sub) => {
                if self.at_bound.contains(name) {
                    return Err(Error::new(
                        name.span(),
                        format!("`{name}` is already bound with `@`; a repeated plain `{name}` would require the same node"),
                    ));
                }
                self.at_bound.push(name.clone());
                self.node(name)?;
                self.pattern(sub)
            }
            Pattern::Const(Some(name)) => {
                self.check_reserved(name)?;
                if self.bindings.contains(name) {
                    return Err(Error::new(
                        name.span(),
                        format!(
                            "`{name}` is already bound; a constant value can be bound only once"
                        ),
                    ));
                }
                self.bindings.values.push(name.clone());
                Ok(())
            }
            Pattern::Node(Node { operands, .. }) => {
                operands.iter().try_for_each(|p| self.pattern(p))
            }
        }
    }

    /// A node binding; repeating a node name is allowed (it means "the same
    /// node"), reusing a value name is not.
    fn node(&mut self, name: &Ident) -> Result<()> {
        self.check_reserved(name)?;
        if self.bindings.values.contains(name) {
            return Err(Error::new(
                name.span(),
                format!("`{name}` is already bound to a constant value by `@const({name})`"),
            ));
        }
        if !self.bindings.nodes.contains(name) {
            self.bindings.nodes.push(name.clone());
        }
        Ok(())
    }

    fn check_reserved(&self, name: &Ident) -> Result<()> {
        if name == CTX {
            return Err(Error::new(
                name.span(),
                "`ctx` is reserved for the matcher context and cannot be bound by a pattern",
            ));
        }
        if self.template_vars.contains(&name) {
            return Err(Error::new(
                name.span(),
                format!("`{name}` is the op variable of an enclosing `for`; pick another name"),
            ));
        }
        Ok(())
    }
}
