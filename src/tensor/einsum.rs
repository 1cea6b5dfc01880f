//! `einsum`: Einstein summation over labelled axes.
//!
//! The equation is parsed into one label list per operand (an ellipsis
//! becomes labels of its own, aligned from the right across operands, so
//! its axes broadcast). A label repeated within one operand takes that
//! operand's diagonal. Every operand is then permuted to one common label
//! order (missing labels become size-1 axes), the operands are multiplied
//! with broadcasting, and the labels absent from the output are summed.

use super::Tensor;
use crate::error::{Error, Result};
use morok_core::shape::ShapeError;

/// A label: a letter, or an ellipsis axis counted from the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Label {
    /// An ellipsis axis; `0` is the last ellipsis axis.
    Ellipsis(usize),
    Letter(char),
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Letter(c) => write!(f, "'{c}'"),
            Label::Ellipsis(k) => write!(f, "ellipsis axis -{}", k + 1),
        }
    }
}

/// One side of an equation term: letters with at most one ellipsis.
struct Term {
    before: Vec<char>,
    ellipsis: bool,
    after: Vec<char>,
}

/// Parses one term (`"ij"`, `"...ij"`, `"i...j"`), or says why it is
/// malformed.
fn parse_term(text: &str) -> std::result::Result<Term, String> {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (before, after, ellipsis) = match text.find("...") {
        Some(at) => (&text[..at], &text[at + 3..], true),
        None => (text.as_str(), "", false),
    };
    let letters = |s: &str| -> std::result::Result<Vec<char>, String> {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphabetic() {
                    Ok(c)
                } else {
                    Err(format!(
                        "'{c}' is not a letter or an ellipsis in \"{text}\""
                    ))
                }
            })
            .collect()
    };
    Ok(Term {
        before: letters(before)?,
        ellipsis,
        after: letters(after)?,
    })
}

impl Term {
    /// The labels of an operand of rank `rank`, or why they do not fit.
    fn labels(&self, rank: usize) -> std::result::Result<Vec<Label>, String> {
        let named = self.before.len() + self.after.len();
        if (!self.ellipsis && named != rank) || named > rank {
            return Err(format!("{named} labels for an operand of rank {rank}"));
        }
        let spread = rank - named;
        let mut out: Vec<Label> = self.before.iter().map(|&c| Label::Letter(c)).collect();
        out.extend((0..spread).rev().map(Label::Ellipsis));
        out.extend(self.after.iter().map(|&c| Label::Letter(c)));
        Ok(out)
    }
}

impl Tensor {
    /// PyTorch's `torch.einsum(equation, operands)`: `"ij,jk->ik"` is a
    /// matrix product, `"ii->i"` a diagonal, `"ii"` a trace, `"...ij->...ji"`
    /// a batched transpose. Without `->` the output is the labels used
    /// once, in alphabetical order, after the ellipsis axes. Operands are
    /// promoted to one dtype; labelled axes must have equal sizes, and
    /// ellipsis axes broadcast.
    #[track_caller]
    pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
        let op = "einsum";
        let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(operands.len());
        for t in operands {
            shapes.push(t.graph()?.shape.to_vec());
        }
        let shape_refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
        // A closure cannot be `#[track_caller]`: locate its errors here.
        let location = std::panic::Location::caller();
        let fail = |why: String| Error::Shape {
            source: ShapeError::new(op, &shape_refs, format!("\"{equation}\": {why}")),
            location,
        };
        let (lhs, rhs) = match equation.split_once("->") {
            Some((_, r)) if r.contains("->") => return Err(fail("more than one \"->\"".into())),
            Some((l, r)) => (l, Some(r)),
            None => (equation, None),
        };
        let terms: Vec<&str> = lhs.split(',').collect();
        if terms.len() != operands.len() || operands.is_empty() {
            return Err(fail(format!(
                "{} terms for {} operands",
                terms.len(),
                operands.len()
            )));
        }
        // Labels per operand; a repeated label takes the diagonal.
        let mut parts: Vec<(Tensor, Vec<Label>)> = Vec::with_capacity(operands.len());
        for (text, t) in terms.iter().zip(operands) {
            let term = parse_term(text).map_err(&fail)?;
            let mut labels = term.labels(t.ndim()).map_err(&fail)?;
            let mut x = (*t).clone();
            while let Some((i, j)) = first_repeat(&labels) {
                let (a, b) = (x.shape()[i], x.shape()[j]);
                if a != b {
                    return Err(fail(format!(
                        "label {} has sizes {a} and {b} in one operand",
                        labels[i]
                    )));
                }
                x = x.diagonal(0, i as isize, j as isize)?;
                let l = labels[i];
                labels.retain(|&m| m != l);
                labels.push(l);
            }
            parts.push((x, labels));
        }
        // The size of every label.
        let mut sizes: std::collections::BTreeMap<Label, usize> = Default::default();
        for (x, labels) in &parts {
            for (&l, &n) in labels.iter().zip(x.shape()) {
                let e = sizes.entry(l).or_insert(n);
                match l {
                    Label::Ellipsis(_) if *e == 1 => *e = n,
                    Label::Ellipsis(_) if n == 1 || n == *e => {}
                    Label::Letter(_) if n == *e => {}
                    _ => return Err(fail(format!("label {l} has sizes {e} and {n}"))),
                }
            }
        }
        let ellipsis_rank = sizes
            .keys()
            .filter(|l| matches!(l, Label::Ellipsis(_)))
            .count();
        let output: Vec<Label> = match rhs {
            Some(r) => {
                let term = parse_term(r).map_err(&fail)?;
                // Ellipsis axes left out of the output are summed.
                let spread = if term.ellipsis { ellipsis_rank } else { 0 };
                let labels = term
                    .labels(term.before.len() + term.after.len() + spread)
                    .map_err(&fail)?;
                for (i, l) in labels.iter().enumerate() {
                    if labels[..i].contains(l) {
                        return Err(fail(format!("output label {l} appears twice")));
                    }
                    if !sizes.contains_key(l) {
                        return Err(fail(format!("output label {l} is in no input")));
                    }
                }
                labels
            }
            None => {
                let mut counts: std::collections::BTreeMap<char, usize> = Default::default();
                for text in &terms {
                    let term = parse_term(text).map_err(&fail)?;
                    for c in term.before.iter().chain(&term.after) {
                        *counts.entry(*c).or_insert(0) += 1;
                    }
                }
                let mut out: Vec<Label> = (0..ellipsis_rank).rev().map(Label::Ellipsis).collect();
                out.extend(
                    counts
                        .iter()
                        .filter(|(_, &n)| n == 1)
                        .map(|(&c, _)| Label::Letter(c)),
                );
                out
            }
        };
        // Common order: output labels, then the summed ones.
        let mut order = output.clone();
        order.extend(sizes.keys().filter(|l| !output.contains(l)));
        let mut product: Option<Tensor> = None;
        for (x, labels) in &parts {
            let mut perm: Vec<usize> = Vec::with_capacity(labels.len());
            let mut aligned = Vec::with_capacity(order.len());
            for l in &order {
                match labels.iter().position(|m| m == l) {
                    Some(p) => {
                        perm.push(p);
                        aligned.push(x.shape()[p]);
                    }
                    None => aligned.push(1),
                }
            }
            let y = x.permute_to(&perm)?.reshape_to(&aligned)?;
            product = Some(match product {
                None => y,
                Some(p) => p.mul(&y)?,
            });
        }
        let Some(product) = product else {
            return Err(fail("no operands".into()));
        };
        let full: Vec<usize> = order.iter().map(|l| sizes[l]).collect();
        super::checked_numel(op, &full)?;
        let dtype = product.graph()?.dtype;
        let product = product.expand_to(&full)?;
        let summed: Vec<isize> = (output.len()..order.len()).map(|a| a as isize).collect();
        if summed.is_empty() {
            return Ok(product);
        }
        product.sum(Some(&summed), false)?.cast_to(dtype)
    }
}

/// The first pair of positions holding the same label.
fn first_repeat(labels: &[Label]) -> Option<(usize, usize)> {
    for j in 0..labels.len() {
        if let Some(i) = labels[..j].iter().position(|l| *l == labels[j]) {
            return Some((i, j));
        }
    }
    None
}
