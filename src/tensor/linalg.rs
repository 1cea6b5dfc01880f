//! Matrix products: `matmul`/`dot` and `linear`.
//!
//! `a @ b` is a broadcast multiply and a sum: `a` gets a size-1 axis
//! before its last one, `b` has its last two axes swapped (a 1-D operand
//! is used as it is), the product broadcasts to `[..., M, N, K]` and the
//! `K` axis is summed away. The shape rules are `morok_core::shape::matmul_shape`.

use super::Tensor;
use crate::error::{Located, Result};
use morok_core::dtype::ScalarType;
use morok_core::shape::{linear_shape, matmul_shape};

/// Fewest rows of `A` for which a matmul packs `B` (below, `B` is swept
/// only a few times and the copy would not pay).
const MIN_PACKED_ROWS: usize = 64;

/// The width of the column panels a float32 `A [..., M, K] @ B [K, N]`
/// packs `B` into, when it does: two of the host's vectors (the register
/// tile's columns, see `morok_core::vector_register_tile`),
/// when they divide `N`, `B` is larger than the host's L2 cache (1 MiB
/// where unknown) and `M` is at least [`MIN_PACKED_ROWS`]. Packed, the
/// `K × nr` panel each register tile reads is one contiguous block that
/// stays in L2 while the tile loop goes down `A`'s rows (the optimizer
/// orders the loops so); unpacked, its rows lie a whole row of `B`
/// apart, so they miss the L2 (a power-of-two row stride maps them onto
/// a few cache sets) and the TLB. The packing copy reads and writes `B`
/// once.
fn packed_panel_width(a: &[usize], b: &[usize], dtype: ScalarType) -> Option<usize> {
    if b.len() != 2 || a.len() < 2 || dtype != ScalarType::F32 {
        return None;
    }
    let lanes = usize::from(morok_backends::host::host_vector_bytes()) / 4;
    let (m, k, n) = (a[a.len() - 2], b[0], b[1]);
    let l2 = match morok_backends::host::l2_bytes() {
        0 => 1 << 20,
        bytes => bytes,
    };
    let nr = 2 * lanes;
    (lanes >= 4 && n % nr == 0 && n > nr && m >= MIN_PACKED_ROWS && k * n * 4 > l2).then_some(nr)
}

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
        if let Some(nr) = packed_panel_width(&a.shape, &b.shape, dtype) {
            // B [K, N] packed into column panels [N/nr, K, nr]; x is
            // [..., M, 1, K, 1]; the product [..., M, N/nr, K, nr] is summed
            // over K, and [..., M, N/nr, nr] is [..., M, N] in memory.
            let (k, n) = (b.shape[0], b.shape[1]);
            let mut xs: Vec<usize> = a.shape[..n1 - 1].to_vec();
            xs.extend([1, k, 1]);
            let x = self.cast_to(dtype)?.reshape_to(&xs)?;
            let w = other
                .cast_to(dtype)?
                .reshape_to(&[k, n / nr, nr])?
                .permute_to(&[1, 0, 2])?
                .contiguous()?;
            return x.mul(&w)?.sum(Some(&[-2]), false)?.reshape_to(&out);
        }
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
        let bias_shape = match bias {
            Some(b) => Some(b.graph()?.shape.clone()),
            None => None,
        };
        linear_shape(&x.shape, &w.shape, bias_shape.as_deref()).located()?;
        let w = if weight.ndim() >= 2 {
            weight.transpose(-1, -2)?
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
