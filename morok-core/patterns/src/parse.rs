//! Parsing: tokens to the syntax tree of [`crate::ast`]. Only the shape
//! of the input is checked here; names and counts are checked later.

use crate::ast::{Arrow, Input, Item, Literal, Node, Pattern, Rhs, Rule, Template};
use crate::ops;
use proc_macro2::Ident;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{braced, bracketed, parenthesized, token, Error, Expr, Result, Token};

mod kw {
    syn::custom_keyword!(context);
    syn::custom_keyword!(name);
}

/// The words that may follow `@` in a pattern.
const AT_WORDS: &str = "`@zero`, `@one`, `@true`, `@false` or `@const`";

impl Parse for Input {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut context = None;
        let mut name = None;
        while input.peek(Token![@]) && (input.peek2(kw::context) || input.peek2(kw::name)) {
            input.parse::<Token![@]>()?;
            if input.peek(kw::context) {
                let word: kw::context = input.parse()?;
                if context.is_some() {
                    return Err(Error::new(word.span, "`@context` is given twice"));
                }
                context = Some(input.parse()?);
            } else {
                let word: kw::name = input.parse()?;
                if name.is_some() {
                    return Err(Error::new(word.span, "`@name` is given twice"));
                }
                name = Some(input.parse()?);
            }
            input.parse::<Token![;]>()?;
        }
        let items = parse_items(input)?;
        Ok(Input {
            context,
            name,
            items,
        })
    }
}

/// Rules and templates up to the end of `input`, separated by commas (a
/// template's closing brace may stand for its comma).
fn parse_items(input: ParseStream) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    while !input.is_empty() {
        if input.peek(Token![for]) {
            items.push(Item::Template(input.parse()?));
            if input.peek(Token![,]) {
                input.parse::<Token![,]>()?;
            }
        } else {
            items.push(Item::Rule(input.parse()?));
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
    }
    Ok(items)
}

impl Parse for Template {
    fn parse(input: ParseStream) -> Result<Self> {
        input.parse::<Token![for]>()?;
        let var: Ident = input.parse()?;
        input.parse::<Token![in]>()?;
        let group: Ident = input.parse()?;
        let list;
        bracketed!(list in input);
        let ops = list.parse_terminated(Ident::parse, Token![,])?;
        let body;
        braced!(body in input);
        Ok(Template {
            var,
            group,
            ops: ops.into_iter().collect(),
            items: parse_items(&body)?,
        })
    }
}

impl Parse for Rule {
    fn parse(input: ParseStream) -> Result<Self> {
        let pattern_span = input.span();
        let pattern = parse_pattern(input)?;
        let guard = if input.peek(Token![if]) {
            input.parse::<Token![if]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        let arrow = if input.peek(Token![=>]) {
            input.parse::<Token![=>]>()?;
            if input.peek(Token![try]) {
                input.parse::<Token![try]>()?;
                Arrow::Try
            } else {
                Arrow::Fallible
            }
        } else if input.peek(Token![~]) && input.peek2(Token![>]) {
            input.parse::<Token![~]>()?;
            input.parse::<Token![>]>()?;
            if input.peek(Token![try]) {
                return Err(input.error(
                    "a rule that can fail is written `=> try expr` (expr: Result<Option<_>, _>), not `~> try`",
                ));
            }
            Arrow::Rewrite
        } else {
            return Err(input.error(
                "expected `~>` (always rewrites), `=>` (returns an Option) or `=> try` (returns a Result<Option<_>, _>)",
            ));
        };
        let rhs = match input.parse()? {
            Expr::Closure(closure) => Rhs::Closure {
                params: closure
                    .inputs
                    .iter()
                    .map(closure_param)
                    .collect::<Result<_>>()?,
                body: *closure.body,
            },
            expr => Rhs::Expr(expr),
        };
        Ok(Rule {
            pattern,
            guard,
            arrow,
            pattern_span,
            rhs,
        })
    }
}

/// A closure parameter of a right-hand side: a plain name.
fn closure_param(pat: &syn::Pat) -> Result<Ident> {
    match pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
            Ok(p.ident.clone())
        }
        _ => Err(Error::new_spanned(
            pat,
            "a right-hand-side closure takes the names of pattern bindings only (no types or patterns)",
        )),
    }
}

/// One pattern: `_`, `x`, `x @ p`, `@zero` (and friends), `@const(v)`,
/// `Op(p, ...)`, `Op[p, p]`, `Op(p, ..)`.
fn parse_pattern(input: ParseStream) -> Result<Pattern> {
    if input.peek(Token![_]) {
        input.parse::<Token![_]>()?;
        return Ok(Pattern::Wild);
    }
    if input.peek(Token![@]) {
        input.parse::<Token![@]>()?;
        return parse_at_word(input);
    }
    if !input.peek(Ident::peek_any) || input.peek(Token![..]) {
        return Err(input.error(format!(
            "expected a pattern: an op such as `Add(x, y)`, a variable, `_`, or {AT_WORDS}"
        )));
    }
    let ident: Ident = input.parse()?;
    if input.peek(Token![@]) {
        input.parse::<Token![@]>()?;
        let sub = if input.peek(Token![@]) {
            input.parse::<Token![@]>()?;
            parse_at_word(input)?
        } else if starts_at_word(input) {
            parse_at_word(input)?
        } else {
            parse_pattern(input)?
        };
        if let Pattern::Var(other) = &sub {
            return Err(Error::new(
                other.span(),
                format!("`{ident} @ {other}` binds one variable to another; use one name"),
            ));
        }
        return Ok(Pattern::Bind(ident, Box::new(sub)));
    }
    if input.peek(token::Paren) || input.peek(token::Bracket) {
        return parse_node(ident, input).map(Pattern::Node);
    }
    if ops::group_of(&ident.to_string()).is_some() {
        return Err(Error::new(
            ident.span(),
            format!("`{ident}` is an op, not a variable: write `{ident}(..)` to match any `{ident}` node"),
        ));
    }
    Ok(Pattern::Var(ident))
}

/// True if the next token is a word that may follow `@` (so `a @const(v)`
/// reads as `a @ @const(v)`).
fn starts_at_word(input: ParseStream) -> bool {
    let fork = input.fork();
    Ident::parse_any(&fork).is_ok_and(|w| {
        ["zero", "one", "true", "false", "const"]
            .iter()
            .any(|k| w == k)
    })
}

/// The word after `@`: `zero`, `one`, `true`, `false`, `const` or `const(v)`.
fn parse_at_word(input: ParseStream) -> Result<Pattern> {
    let word = Ident::parse_any(input)?;
    let literal = match word.to_string().as_str() {
        "zero" => Literal::Zero,
        "one" => Literal::One,
        "true" => Literal::True,
        "false" => Literal::False,
        "const" => {
            if !input.peek(token::Paren) {
                return Ok(Pattern::Const(None));
            }
            let inner;
            parenthesized!(inner in input);
            let value: Ident = inner.parse()?;
            if !inner.is_empty() {
                return Err(inner.error("`@const(...)` takes one variable name for the value"));
            }
            return Ok(Pattern::Const(Some(value)));
        }
        _ => {
            return Err(Error::new(
                word.span(),
                format!("unknown `@{word}`: expected {AT_WORDS}"),
            ))
        }
    };
    Ok(Pattern::Literal(literal))
}

/// The operand list after an op name, in parentheses (ordered) or
/// brackets (commutative).
fn parse_node(op: Ident, input: ParseStream) -> Result<Node> {
    let list;
    let (commutative, span) = if input.peek(token::Bracket) {
        let delim = bracketed!(list in input);
        (true, delim.span.join())
    } else {
        let delim = parenthesized!(list in input);
        (false, delim.span.join())
    };
    let mut operands = Vec::new();
    let mut rest = false;
    while !list.is_empty() {
        if list.peek(Token![..]) {
            let dots: Token![..] = list.parse()?;
            if list.peek(Token![,]) {
                list.parse::<Token![,]>()?;
            }
            if !list.is_empty() {
                return Err(Error::new_spanned(dots, "`..` must be the last operand"));
            }
            rest = true;
            break;
        }
        operands.push(parse_pattern(&list)?);
        if !list.is_empty() {
            list.parse::<Token![,]>()?;
        }
    }
    Ok(Node {
        op,
        operands,
        rest,
        commutative,
        span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn rules(tokens: proc_macro2::TokenStream) -> Vec<Rule> {
        let input: Input = syn::parse2(tokens).unwrap();
        input
            .items
            .into_iter()
            .map(|item| match item {
                Item::Rule(rule) => *rule,
                Item::Template(_) => panic!("expected a rule"),
            })
            .collect()
    }

    fn operands(pattern: &Pattern) -> &[Pattern] {
        match pattern {
            Pattern::Node(node) => &node.operands,
            _ => panic!("expected an op pattern"),
        }
    }

    #[test]
    fn at_words_bind_with_or_without_a_second_at() {
        let r = rules(quote!(Add(a @const(av), z @ @zero) ~> a));
        let ops = operands(&r[0].pattern);
        assert!(matches!(&ops[0], Pattern::Bind(a, c)
            if a == "a" && matches!(&**c, Pattern::Const(Some(v)) if v == "av")));
        assert!(matches!(&ops[1], Pattern::Bind(z, l)
            if z == "z" && matches!(**l, Pattern::Literal(Literal::Zero))));
    }

    #[test]
    fn brackets_mark_commutative_nodes_and_dots_the_rest() {
        let r = rules(quote!(Add[x, y] ~> x, End(x, ..,) ~> x, Sink() ~> x,));
        let node = |i: usize| match &r[i].pattern {
            Pattern::Node(n) => (n.commutative, n.rest, n.operands.len()),
            _ => panic!("expected an op pattern"),
        };
        assert_eq!(node(0), (true, false, 2));
        assert_eq!(node(1), (false, true, 1));
        assert_eq!(node(2), (false, false, 0));
    }

    #[test]
    fn arrows_guards_and_closures() {
        let r = rules(quote!(
            Add(x, _) if x.op() == Op::Const ~> x,
            Mul(x, y) => |y, x| Some(x),
        ));
        assert!(r[0].guard.is_some() && r[0].arrow == Arrow::Rewrite);
        assert!(matches!(r[0].rhs, Rhs::Expr(_)));
        assert!(r[1].guard.is_none() && r[1].arrow == Arrow::Fallible);
        let t: Vec<Rule> = rules(quote!(Neg(x) => try Ok::<_, String>(Some(x))));
        assert!(t[0].arrow == Arrow::Try);
        assert!(matches!(&r[1].rhs, Rhs::Closure { params, .. }
            if params.len() == 2 && params[0] == "y" && params[1] == "x"));
    }

    #[test]
    fn header_and_templates() {
        let input: Input = syn::parse2(quote!(
            @name "n";
            @context Vec<u8>;
            @const(v) => None,
            for op in binary [Add, Mul] { op(x, _) ~> x, op(_, x) ~> x }
            Neg(x) ~> x,
        ))
        .unwrap();
        assert_eq!(input.name.unwrap().value(), "n");
        assert!(input.context.is_some());
        assert_eq!(input.items.len(), 3);
        let Item::Template(t) = &input.items[1] else {
            panic!("expected a template");
        };
        assert_eq!(
            (t.var.to_string(), t.group.to_string()),
            ("op".into(), "binary".into())
        );
        assert_eq!(t.ops.len(), 2);
        assert_eq!(t.items.len(), 2);
    }

    #[test]
    fn a_header_may_not_repeat() {
        let err = syn::parse2::<Input>(quote!(@name "a"; @name "b";))
            .err()
            .unwrap();
        assert_eq!(err.to_string(), "`@name` is given twice");
    }
}
