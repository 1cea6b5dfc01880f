//! Matrix products: `matmul`/`dot` and `linear`.
//!
//! `a @ b` is a broadcast multiply and a sum: `a` gets a size-1 axis
//! before its last one, `b` has its last two axes swapped (a 1-D operand
//! is used as it is), the product broadcasts to `[..., M, N, K]` and the
//! `K` axis is summed away. The shape rules are `morok_core::shape::matmul_shape`.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{broadcast_shapes, matmul_shape, ShapeError};

impl Tensor {
    /// Matrix product with NumPy/PyTorch `matmul` rules: `[M, K] @ [K, N]`,
    /// vector-matrix, matrix-vector, vector-vector (a scalar) and batched
    /// products with broadcast batch axes.
    #[track_caller]
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let (a, b) = (self.graph()?, other.graph()?);
        let out = matmul_shape(&a.shape, &b.shape).located()?;
        // The broadcast product before the sum holds `out × K` elements.
        let mut product = out.to_vec();
        product.push(a.shape[a.shape.len() - 1]);
        super::checked_numel("matmul", &product)?;
        let dtype = a.dtype.promote(b.dtype);
        let (n1, n2) = (a.shape.len(), b.shape.len());
        let ones = (n1 - 1).min(n2 - 1).min(1);
        let mut xs: Vec<usize> = a.shape[..n1 - 1].to_vec();
        xs.extend(vec![1; ones]);
        xs.push(a.shape[n1 - 1]);
        let tail = n2.min(2);
        let mut ws: Vec<usize> = b.shape[..n2 - tail].to_vec();
        ws.extend(vec![1; ones]);
        ws.extend_from_slice(&b.shape[n2 - tail..]);
        let x = self.cast_to(dtype)?.reshape_to(&xs)?;
        let w = other.cast_to(dtype)?.reshape_to(&ws)?;
        let w = w.swap_axes(ws.len() - 1, ws.len() - tail)?;
        x.mul(&w)?.sum(Some(&[-1]), false)
    }

    /// The book's name for [`Tensor::matmul`].
    #[track_caller]
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        self.matmul(other)
    }

    /// A fully connected layer, `self @ weight.T + bias`, with `weight` of
    /// shape `[out_features, in_features]` (or `[in_features]`) as in
    /// PyTorch; `self` is `[..., in_features]` and `bias` broadcasts to the
    /// output `[..., out_features]`.
    #[track_caller]
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        let (x, w) = (self.graph()?, weight.graph()?);
        let location = std::panic::Location::caller();
        // A closure cannot be `#[track_caller]`: build the error here.
        let fail = |shapes: &[&[usize]], why: &str| {
            Err(Error::Shape {
                source: ShapeError::new("linear", shapes, why),
                location,
            })
        };
        if !matches!(w.shape.len(), 1 | 2) {
            return fail(
                &[&x.shape, &w.shape],
                "the weight must be [out_features, in_features] or [in_features]",
            );
        }
        if x.shape.last() != w.shape.last() {
            return fail(
                &[&x.shape, &w.shape],
                "the input's last axis must match the weight's in_features",
            );
        }
        let mut out = x.shape[..x.shape.len() - 1].to_vec();
        if w.shape.len() == 2 {
            out.push(w.shape[0]);
        }
        if let Some(b) = bias {
            let bs = b.graph()?.shape.clone();
            if broadcast_shapes("linear", &out, &bs).ok().as_deref() != Some(out.as_slice()) {
                return fail(&[&out, &bs], "the bias must broadcast to the output");
            }
        }
        let w = if weight.ndim() >= 2 {
            weight.try_transpose(-1, -2)?
        } else {
            weight.clone()
        };
        let y = self.matmul(&w)?;
        match bias {
            Some(b) => y.add(b),
            None => Ok(y),
        }
    }
}
