//! `einsum`: Einstein summation over labelled axes.
//!
//! The equation is parsed and checked, and the execution planned, by
//! [`morok_core::shape::einsum_plan`]; this file executes the plan: each
//! operand takes the diagonals of its repeated labels and is permuted to
//! the common label order, the operands are multiplied with
//! broadcasting, and the labels absent from the output are summed.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{einsum_plan, ShapeError};

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
        let plan = einsum_plan(equation, &shape_refs).located()?;
        let mut product: Option<Tensor> = None;
        for (t, part) in operands.iter().zip(&plan.operands) {
            let mut x = (*t).clone();
            for &(i, j) in &part.diagonals {
                x = x.diagonal(0, i as isize, j as isize)?;
            }
            let y = x.permute_to(&part.perm)?.reshape_to(&part.aligned)?;
            product = Some(match product {
                None => y,
                Some(p) => p.mul(&y)?,
            });
        }
        let Some(product) = product else {
            return Err(Error::shape(ShapeError::new(
                op,
                &shape_refs,
                format!("\"{equation}\": no operands"),
            )));
        };
        super::checked_numel(op, &plan.full)?;
        let dtype = product.graph()?.dtype;
        let product = product.expand_to(&plan.full)?;
        let summed: Vec<isize> = (plan.output..plan.full.len()).map(|a| a as isize).collect();
        if summed.is_empty() {
            return Ok(product);
        }
        product.sum(Some(&summed), false)?.cast_to(dtype)
    }
}
