//! `einsum`: the equation's parsing and shape rule ([`einsum_shape`]),
//! and the plan the tensor API executes ([`einsum_plan`]).
//!
//! The equation is parsed into one label list per operand (an ellipsis
//! becomes labels of its own, aligned from the right across operands, so
//! its axes broadcast). A label repeated within one operand takes that
//! operand's diagonal. Every operand is then permuted to one common label
//! order (missing labels become size-1 axes), the operands are multiplied
//! with broadcasting, and the labels absent from the output are summed.

use std::collections::BTreeMap;
use std::fmt;

use super::{Dim, Dims, ShapeError};

/// A label of an einsum axis: a letter, or an ellipsis axis counted from
/// the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EinsumLabel {
    /// An ellipsis axis; `0` is the last ellipsis axis.
    Ellipsis(usize),
    /// A letter of the equation.
    Letter(char),
}

impl fmt::Display for EinsumLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EinsumLabel::Letter(c) => write!(f, "'{c}'"),
            EinsumLabel::Ellipsis(k) => write!(f, "ellipsis axis -{}", k + 1),
        }
    }
}

/// How one operand enters the product of an [`EinsumPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EinsumOperand<D> {
    /// The diagonals to take first, in order: each `(i, j)` is
    /// `diagonal(0, i, j)`, which removes axes `i < j` and appends their
    /// diagonal as the last axis.
    pub diagonals: Vec<(usize, usize)>,
    /// The labels of the operand's axes once the diagonals are taken
    /// (each label once).
    pub labels: Vec<EinsumLabel>,
    /// The permutation of those axes into the plan's label order.
    pub perm: Vec<usize>,
    /// The permuted shape with a size-1 axis for each label of the plan
    /// the operand lacks: it broadcasts to [`EinsumPlan::full`].
    pub aligned: Dims<D>,
}

/// The execution of an einsum: take each operand's diagonals, permute
/// and reshape it to its `aligned` shape, multiply all of them (expanded
/// to `full`), and sum the axes from `output` on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EinsumPlan<D> {
    /// One entry per operand, in order.
    pub operands: Vec<EinsumOperand<D>>,
    /// The common label order: the output's labels, then the summed ones.
    pub labels: Vec<EinsumLabel>,
    /// The size of each label of `labels`: the shape of the product.
    pub full: Dims<D>,
    /// How many leading labels are the output's; the rest are summed.
    pub output: usize,
}

impl<D: Dim> EinsumPlan<D> {
    /// The shape of the result: the output labels' sizes.
    pub fn shape(&self) -> Dims<D> {
        self.full[..self.output].iter().cloned().collect()
    }
}

/// One side of an equation term: letters with at most one ellipsis.
struct Term {
    before: Vec<char>,
    ellipsis: bool,
    after: Vec<char>,
}

impl Term {
    /// Parses one term (`"ij"`, `"...ij"`, `"i...j"`), or says why it is
    /// malformed.
    fn parse(text: &str) -> Result<Term, String> {
        let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (before, after, ellipsis) = match text.find("...") {
            Some(at) => (&text[..at], &text[at + 3..], true),
            None => (text.as_str(), "", false),
        };
        let letters = |s: &str| -> Result<Vec<char>, String> {
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

    /// The number of letters.
    fn named(&self) -> usize {
        self.before.len() + self.after.len()
    }

    /// The labels of an operand of rank `rank`, or why they do not fit.
    fn labels(&self, rank: usize) -> Result<Vec<EinsumLabel>, String> {
        let named = self.named();
        if (!self.ellipsis && named != rank) || named > rank {
            return Err(format!("{named} labels for an operand of rank {rank}"));
        }
        let spread = rank - named;
        let mut out: Vec<EinsumLabel> = self
            .before
            .iter()
            .map(|&c| EinsumLabel::Letter(c))
            .collect();
        out.extend((0..spread).rev().map(EinsumLabel::Ellipsis));
        out.extend(self.after.iter().map(|&c| EinsumLabel::Letter(c)));
        Ok(out)
    }
}

/// The first pair of positions holding the same label.
fn first_repeat(labels: &[EinsumLabel]) -> Option<(usize, usize)> {
    (0..labels.len()).find_map(|j| {
        labels[..j]
            .iter()
            .position(|l| *l == labels[j])
            .map(|i| (i, j))
    })
}

/// An operand's labels and shape once its repeated labels have taken
/// their diagonals, and those diagonals; or why a repeated label's sizes
/// differ.
type Diagonalized<D> = (Vec<(usize, usize)>, Vec<EinsumLabel>, Vec<D>);

/// Takes the diagonals of `labels` over `shape` (as `diagonal` does:
/// the two axes go, their diagonal comes last).
fn diagonalize<D: Dim>(
    mut labels: Vec<EinsumLabel>,
    shape: &[D],
) -> Result<Diagonalized<D>, String> {
    let mut shape = shape.to_vec();
    let mut diagonals = Vec::new();
    while let Some((i, j)) = first_repeat(&labels) {
        let (a, b) = (&shape[i], &shape[j]);
        if a != b {
            return Err(format!(
                "label {} has sizes {a} and {b} in one operand",
                labels[i]
            ));
        }
        let n = shape[i].clone();
        let l = labels[i];
        for k in [j, i] {
            shape.remove(k);
            labels.remove(k);
        }
        shape.push(n);
        labels.push(l);
        diagonals.push((i, j));
    }
    Ok((diagonals, labels, shape))
}

/// The output labels: those after `->`, or, without it, the ellipsis
/// axes and then the letters used once, in alphabetical order.
fn output_labels<D>(
    rhs: Option<&str>,
    terms: &[Term],
    sizes: &BTreeMap<EinsumLabel, D>,
) -> Result<Vec<EinsumLabel>, String> {
    let ellipsis_rank = sizes
        .keys()
        .filter(|l| matches!(l, EinsumLabel::Ellipsis(_)))
        .count();
    let Some(rhs) = rhs else {
        let mut counts: BTreeMap<char, usize> = BTreeMap::new();
        for term in terms {
            for c in term.before.iter().chain(&term.after) {
                *counts.entry(*c).or_insert(0) += 1;
            }
        }
        let mut out: Vec<EinsumLabel> = (0..ellipsis_rank)
            .rev()
            .map(EinsumLabel::Ellipsis)
            .collect();
        out.extend(
            counts
                .iter()
                .filter(|(_, &n)| n == 1)
                .map(|(&c, _)| EinsumLabel::Letter(c)),
        );
        return Ok(out);
    };
    let term = Term::parse(rhs)?;
    // Ellipsis axes left out of the output are summed.
    let spread = if term.ellipsis { ellipsis_rank } else { 0 };
    let labels = term.labels(term.named() + spread)?;
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            return Err(format!("output label {l} appears twice"));
        }
        if !sizes.contains_key(l) {
            return Err(format!("output label {l} is in no input"));
        }
    }
    Ok(labels)
}

/// Plans `equation` over operands of `shapes`, or says why it cannot be.
fn plan<D: Dim>(equation: &str, shapes: &[&[D]]) -> Result<EinsumPlan<D>, String> {
    let (lhs, rhs) = match equation.split_once("->") {
        Some((_, r)) if r.contains("->") => return Err("more than one \"->\"".into()),
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let texts: Vec<&str> = lhs.split(',').collect();
    if texts.len() != shapes.len() || shapes.is_empty() {
        return Err(format!(
            "{} terms for {} operands",
            texts.len(),
            shapes.len()
        ));
    }
    let mut terms = Vec::with_capacity(texts.len());
    let mut parts = Vec::with_capacity(texts.len());
    for (text, shape) in texts.iter().zip(shapes) {
        let term = Term::parse(text)?;
        let labels = term.labels(shape.len())?;
        parts.push(diagonalize(labels, shape)?);
        terms.push(term);
    }
    // The size of every label.
    let mut sizes: BTreeMap<EinsumLabel, D> = BTreeMap::new();
    for (_, labels, shape) in &parts {
        for (&l, n) in labels.iter().zip(shape) {
            let e = sizes.entry(l).or_insert_with(|| n.clone());
            match l {
                EinsumLabel::Ellipsis(_) if e.is_one() => *e = n.clone(),
                EinsumLabel::Ellipsis(_) if n.is_one() || *n == *e => {}
                EinsumLabel::Letter(_) if *n == *e => {}
                _ => return Err(format!("label {l} has sizes {e} and {n}")),
            }
        }
    }
    let output = output_labels(rhs, &terms, &sizes)?;
    let mut order = output.clone();
    order.extend(sizes.keys().filter(|l| !output.contains(l)));
    let full: Dims<D> = order.iter().map(|l| sizes[l].clone()).collect();
    let operands = parts
        .into_iter()
        .map(|(diagonals, labels, shape)| {
            let mut perm = Vec::with_capacity(labels.len());
            let mut aligned = Dims::with_capacity(order.len());
            for l in &order {
                match labels.iter().position(|m| m == l) {
                    Some(p) => {
                        perm.push(p);
                        aligned.push(shape[p].clone());
                    }
                    None => aligned.push(D::lit(1)),
                }
            }
            EinsumOperand {
                diagonals,
                labels,
                perm,
                aligned,
            }
        })
        .collect();
    Ok(EinsumPlan {
        operands,
        labels: order,
        full,
        output: output.len(),
    })
}

/// Plans PyTorch's `einsum(equation, operands)` over operands of
/// `shapes`: `"ij,jk->ik"` is a matrix product, `"ii->i"` a diagonal,
/// `"ii"` a trace, `"...ij->...ji"` a batched transpose. Without `->` the
/// output is the labels used once, in alphabetical order, after the
/// ellipsis axes. Labelled axes must have equal sizes (a name and a
/// number differ); ellipsis axes broadcast. Errors (op `einsum`) quote
/// the equation.
pub fn einsum_plan<D: Dim>(equation: &str, shapes: &[&[D]]) -> Result<EinsumPlan<D>, ShapeError> {
    plan(equation, shapes)
        .map_err(|why| ShapeError::new("einsum", shapes, format!("\"{equation}\": {why}")))
}

/// The shape of `einsum(equation, operands)` over operands of `shapes`
/// (see [`einsum_plan`] for the rules and errors).
pub fn einsum_shape<D: Dim>(equation: &str, shapes: &[&[D]]) -> Result<Dims<D>, ShapeError> {
    einsum_plan(equation, shapes).map(|p| p.shape())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::SymDim;

    fn shape(eq: &str, shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
        einsum_shape(eq, shapes)
            .map(|s| s.to_vec())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn typical_shapes() {
        assert_eq!(shape("ij,jk->ik", &[&[2, 3], &[3, 4]]), Ok(vec![2, 4]));
        assert_eq!(shape("ij,jk", &[&[2, 3], &[3, 4]]), Ok(vec![2, 4]));
        assert_eq!(shape("ii->i", &[&[3, 3]]), Ok(vec![3]));
        assert_eq!(shape("ii", &[&[3, 3]]), Ok(vec![]));
        assert_eq!(shape("iii->i", &[&[2, 2, 2]]), Ok(vec![2]));
        assert_eq!(shape("...ij->...ji", &[&[5, 2, 3]]), Ok(vec![5, 3, 2]));
        assert_eq!(
            shape("...ij,...jk", &[&[5, 1, 2, 3], &[4, 3, 6]]),
            Ok(vec![5, 4, 2, 6])
        );
        assert_eq!(shape("...i->i", &[&[5, 2]]), Ok(vec![2]));
        assert_eq!(
            shape(" b i , b j -> b i j ", &[&[2, 3], &[2, 4]]),
            Ok(vec![2, 3, 4])
        );
    }

    #[test]
    fn plan_of_a_trace_and_a_product() {
        let p = einsum_plan("iij,jk->k", &[&[2usize, 2, 3], &[3, 4]]).unwrap();
        let [i, j, k] = ['i', 'j', 'k'].map(EinsumLabel::Letter);
        assert_eq!(p.operands[0].diagonals, [(0, 1)]);
        assert_eq!(p.operands[0].labels, [j, i]);
        assert_eq!(p.labels, [k, i, j]);
        assert_eq!(p.full.to_vec(), [4, 2, 3]);
        assert_eq!(p.output, 1);
        assert_eq!(p.operands[0].perm, [1, 0]);
        assert_eq!(p.operands[0].aligned.to_vec(), [1, 2, 3]);
        assert_eq!(p.operands[1].perm, [1, 0]);
        assert_eq!(p.operands[1].aligned.to_vec(), [4, 1, 3]);
    }

    #[test]
    fn errors() {
        let err = |eq: &str, shapes: &[&[usize]]| shape(eq, shapes).unwrap_err();
        assert_eq!(
            err("ij,kj->iq", &[&[3, 2], &[3, 2]]),
            "einsum: [3, 2] and [3, 2]: \"ij,kj->iq\": output label 'q' is in no input"
        );
        assert!(err("ij,jk", &[&[3, 2], &[3, 2]]).ends_with("label 'j' has sizes 2 and 3"));
        assert!(err("i->i->i", &[&[3]]).ends_with("more than one \"->\""));
        assert!(err("i,i", &[&[3]]).ends_with("2 terms for 1 operands"));
        assert!(err("", &[]).ends_with("1 terms for 0 operands"));
        assert!(err("i1", &[&[3, 3]]).ends_with("'1' is not a letter or an ellipsis in \"i1\""));
        assert!(err("ij", &[&[3]]).ends_with("2 labels for an operand of rank 1"));
        assert!(err("...ij", &[&[3]]).ends_with("2 labels for an operand of rank 1"));
        assert!(err("ii", &[&[2, 3]]).ends_with("label 'i' has sizes 2 and 3 in one operand"));
        assert!(err("ij->ii", &[&[2, 3]]).ends_with("output label 'i' appears twice"));
        assert!(err("...i,...i", &[&[2, 3], &[4, 3]])
            .ends_with("label ellipsis axis -1 has sizes 2 and 4"));
        assert!(err("i->i?", &[&[2]]).ends_with("'?' is not a letter or an ellipsis in \"i?\""));
    }

    #[test]
    fn symbolic_sizes() {
        let b = SymDim::name("B");
        let n = |v: usize| SymDim::from(v);
        let x = [b.clone(), n(3)];
        let y = [n(3), n(4)];
        let out = einsum_shape("bi,ij->bj", &[&x, &y]).unwrap();
        assert_eq!(out.to_vec(), [b.clone(), n(4)]);
        let e = einsum_shape("ij,ij->i", &[&x, &[n(3), n(3)]]).unwrap_err();
        assert_eq!(e.reason, "\"ij,ij->i\": label 'i' has sizes B and 3");
        let batched = [n(1), n(3)];
        let out = einsum_shape("...i,...i->...", &[&[b.clone(), n(3)], &batched]).unwrap();
        assert_eq!(out.to_vec(), [b]);
    }
}
