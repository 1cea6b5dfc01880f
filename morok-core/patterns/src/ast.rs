//! The syntax tree of a `patterns!` invocation, as written (before
//! checking and template expansion).

use proc_macro2::{Ident, Span};
use syn::{Expr, LitStr, Type};

/// A whole invocation: optional header, then rules and templates.
pub struct Input {
    /// `@context Type;` — the matcher's context type (default `()`).
    pub context: Option<Type>,
    /// `@name "...";` — the matcher's name (default: the call site).
    pub name: Option<LitStr>,
    /// The rules and templates, in order.
    pub items: Vec<Item>,
}

/// One entry of the rule list.
pub enum Item {
    /// `pattern [if guard] ~> rhs` or `pattern [if guard] => rhs`.
    Rule(Box<Rule>),
    /// `for op in group [Op, ...] { items }`.
    Template(Template),
}

/// A template: its body is instantiated once per listed op, with `var`
/// standing for that op in patterns and right-hand sides.
pub struct Template {
    /// The op variable (`op` in `for op in binary [...]`).
    pub var: Ident,
    /// The group word: `unary`, `binary`, `ternary` or `any`.
    pub group: Ident,
    /// The ops to instantiate the body for.
    pub ops: Vec<Ident>,
    /// The rules (or nested templates) to instantiate.
    pub items: Vec<Item>,
}

/// A rewrite rule.
pub struct Rule {
    /// What the node must look like.
    pub pattern: Pattern,
    /// `if expr`: an extra condition over the bindings.
    pub guard: Option<Expr>,
    /// Which arrow separates pattern and right-hand side.
    pub arrow: Arrow,
    /// The span of the rule's pattern (where its registration points).
    pub pattern_span: proc_macro2::Span,
    /// The replacement.
    pub rhs: Rhs,
}

/// The arrow of a rule, which fixes the type of its right-hand side.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Arrow {
    /// `~>`: the rhs always produces a node (`Arc<UOp>` or `&Arc<UOp>`).
    Rewrite,
    /// `=>`: the rhs may decline (`Option<Arc<UOp>>` or `Option<&Arc<UOp>>`).
    Fallible,
    /// `=> try`: the rhs may decline or fail
    /// (`Result<Option<Arc<UOp>>, E>` with `E: Into<RuleError>`).
    Try,
}

/// The right-hand side of a rule.
pub enum Rhs {
    /// A plain expression; every binding it mentions is in scope.
    Expr(Expr),
    /// `|a, b| body`: only the listed bindings are in scope in `body`.
    Closure {
        /// The parameter names, each a binding of the pattern.
        params: Vec<Ident>,
        /// The closure body.
        body: Expr,
    },
}

impl Rhs {
    /// The expression that computes the replacement.
    pub fn body(&self) -> &Expr {
        match self {
            Rhs::Expr(e) => e,
            Rhs::Closure { body, .. } => body,
        }
    }
}

/// A pattern over one node.
#[derive(Clone)]
pub enum Pattern {
    /// `_`: any node.
    Wild,
    /// `x`: any node, bound to `x`; a repeated name requires the same node.
    Var(Ident),
    /// `x @ pattern`: the node matched by `pattern`, bound to `x`.
    Bind(Ident, Box<Pattern>),
    /// `@const` or `@const(v)`: a CONST node, its value bound to `v`.
    Const(Option<Ident>),
    /// `@zero`, `@one`, `@true`, `@false`.
    Literal(Literal),
    /// `Op(...)` or `Op[...]`.
    Node(Node),
}

/// The constant a literal pattern stands for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    /// A CONST equal to zero (any dtype; `false` for bool).
    Zero,
    /// A CONST equal to one (any dtype; `true` for bool).
    One,
    /// The bool CONST `true`.
    True,
    /// The bool CONST `false`.
    False,
}

/// An op pattern: `Op(a, b)` (ordered), `Op[a, b]` (commutative) or
/// `Op(a, ..)` (any further operands).
#[derive(Clone)]
pub struct Node {
    /// The op name, or a template's op variable.
    pub op: Ident,
    /// The operand patterns.
    pub operands: Vec<Pattern>,
    /// `..` after the operands: any number of further operands.
    pub rest: bool,
    /// Written with brackets: the two operands may match in either order.
    pub commutative: bool,
    /// The operand list, brackets included (for error messages).
    pub span: Span,
}
