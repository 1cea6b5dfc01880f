//! Multi-head attention, PyTorch's `nn.MultiheadAttention` with
//! `batch_first=True`.

use super::{named, Linear, Module};
use crate::dsl::rt::layer_seed;
use crate::{AttentionOptions, DType, Error, Result, Tensor};

/// Queries, keys and values projected by one `[3E, E]` weight, split into
/// `heads` heads of `E / heads` features, scaled dot-product attention in
/// each, and an output projection. Inputs are `[B, L, E]` (queries) and
/// `[B, S, E]` (keys, values).
#[derive(Clone, Debug)]
pub struct MultiheadAttention {
    /// `[3E, E]`, Xavier-uniform.
    pub in_proj_weight: Tensor,
    /// `[3E]`, zeros.
    pub in_proj_bias: Tensor,
    /// `E → E`, bias zero.
    pub out_proj: Linear,
    heads: usize,
}

impl MultiheadAttention {
    /// A layer of width `embed` with `heads` heads (`embed` must be a
    /// multiple of `heads`), PyTorch's initialization, from `seed`.
    #[track_caller]
    pub fn new(embed: usize, heads: usize, seed: u64) -> Result<MultiheadAttention> {
        if heads == 0 || !embed.is_multiple_of(heads) {
            return Err(Error::argument(
                "multihead_attention",
                format!("the width {embed} is not a multiple of {heads} heads"),
            ));
        }
        let mut out_proj = Linear::init(embed, embed, true, layer_seed(seed, 2))?;
        out_proj.bias = Some(
            Tensor::zeros(&[embed], DType::F32)
                .contiguous()?
                .realize()?,
        );
        Ok(MultiheadAttention {
            in_proj_weight: Tensor::xavier_uniform(
                &[3 * embed, embed],
                DType::F32,
                1.0,
                layer_seed(seed, 0),
            )?
            .realize()?,
            in_proj_bias: Tensor::zeros(&[3 * embed], DType::F32)
                .contiguous()?
                .realize()?,
            out_proj,
            heads,
        })
    }

    /// The attention output `[B, L, E]` of `query` over `key` and `value`;
    /// `opts` gives the mask and causality (its dropout is not used).
    #[track_caller]
    pub fn forward(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        opts: &AttentionOptions,
    ) -> Result<Tensor> {
        let e = self.out_proj.weight.shape()[0];
        for (what, t) in [("query", query), ("key", key), ("value", value)] {
            let s = t.shape();
            if s.len() != 3 || s[2] != e {
                return Err(Error::argument(
                    "multihead_attention",
                    format!("the {what} {s:?} is not [batch, length, {e}]"),
                ));
            }
        }
        let w = self.in_proj_weight.chunk(3, 0)?;
        let b = self.in_proj_bias.chunk(3, 0)?;
        let (h, d) = (self.heads as isize, (e / self.heads) as isize);
        let heads = |x: &Tensor, i: usize| -> Result<Tensor> {
            let (batch, len) = (x.shape()[0] as isize, x.shape()[1] as isize);
            x.linear(&w[i], Some(&b[i]))?
                .reshape(&[batch, len, h, d])?
                .transpose(1, 2)
        };
        let (q, k, v) = (heads(query, 0)?, heads(key, 1)?, heads(value, 2)?);
        let opts = AttentionOptions {
            dropout_p: 0.0,
            ..opts.clone()
        };
        let (batch, len) = (query.shape()[0] as isize, query.shape()[1] as isize);
        let joined = q
            .scaled_dot_product_attention(&k, &v, &opts)?
            .transpose(1, 2)?
            .reshape(&[batch, len, e as isize])?;
        self.out_proj.forward(&joined)
    }
}

impl Module for MultiheadAttention {
    fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((named(prefix, "in_proj_weight"), self.in_proj_weight.clone()));
        out.push((named(prefix, "in_proj_bias"), self.in_proj_bias.clone()));
        self.out_proj.parameters(&named(prefix, "out_proj"), out);
    }
}
