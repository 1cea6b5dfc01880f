//! `scaled_dot_product_attention`, composed of matmul, softmax and masks.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{attention_shape, broadcast_shapes, ShapeError};

/// Options of [`Tensor::scaled_dot_product_attention`] (PyTorch's keyword
/// arguments; dropout is off by default).
#[derive(Clone, Debug, Default)]
pub struct AttentionOptions {
    /// `attn_mask`: a bool mask (true: attend) or a float bias added to
    /// the scores; broadcasts to `[..., L, S]`.
    pub mask: Option<Tensor>,
    /// `is_causal`: query `i` attends to keys `0..=i` (the upper-left
    /// aligned lower triangle, as in PyTorch).
    pub is_causal: bool,
    /// `scale`: the scores' factor (default `1 / sqrt(E)`).
    pub scale: Option<f64>,
    /// `enable_gqa`: grouped-query attention, where the query heads
    /// (axis -3) are a multiple of the key/value heads, each of which
    /// serves consecutive query heads.
    pub enable_gqa: bool,
    /// `dropout_p`: each attention weight is zeroed with this probability
    /// and the kept ones are scaled by `1 / (1 - p)`; 0 (the default) is
    /// exact (no dropout is built), 1 zeroes every weight.
    pub dropout_p: f64,
    /// The seed of the dropout mask (see [`Tensor::rand_seeded`]): the
    /// same seed drops the same weights.
    pub dropout_seed: u64,
}

impl Tensor {
    /// PyTorch's `scaled_dot_product_attention(query, key, value, ...)`
    /// with `self` as the query `[..., Hq, L, E]`, `key` `[..., H, S, E]`
    /// and `value` `[..., H, S, Ev]`: `softmax(q @ k^T * scale + mask) @
    /// v`, of shape `[..., Hq, L, Ev]`. A row whose keys are all masked
    /// gives NaN, as in PyTorch.
    #[track_caller]
    pub fn scaled_dot_product_attention(
        &self,
        key: &Tensor,
        value: &Tensor,
        opts: &AttentionOptions,
    ) -> Result<Tensor> {
        let op = "scaled_dot_product_attention";
        let (q, k, v) = (
            self.graph()?.shape.to_vec(),
            key.graph()?.shape.to_vec(),
            value.graph()?.shape.to_vec(),
        );
        // A closure cannot be `#[track_caller]`: locate its errors here.
        let location = std::panic::Location::caller();
        let fail = |why: String| Error::Shape {
            source: ShapeError::new(op, &[&q, &k, &v], why),
            location,
        };
        attention_shape(&q, &k, &v, opts.enable_gqa).located()?;
        if opts.is_causal && opts.mask.is_some() {
            // As PyTorch: one of the two says which keys a query sees.
            return Err(Error::argument(
                op,
                "is_causal and an explicit mask together: give one (fold the causal \
                 triangle into the mask)",
            ));
        }
        let (e, s) = (q[q.len() - 1], k[k.len() - 2]);
        let heads = |t: &[usize]| if t.len() >= 3 { t[t.len() - 3] } else { 1 };
        let (hq, hk) = (heads(&q), heads(&k));
        let (mut key, mut value) = (key.clone(), value.clone());
        if hq != hk {
            key = key.repeat_interleave(hq / hk, Some(-3))?;
            value = value.repeat_interleave(hq / hk, Some(-3))?;
        }
        let scale = opts.scale.unwrap_or(1.0 / (e as f64).sqrt());
        let scores = self
            .to_float()?
            .matmul(&key.transpose(-1, -2)?)?
            .mul(scale)?;
        let l = q[q.len() - 2];
        let scores = if opts.is_causal {
            let keep = Tensor::ones(&[l, s], crate::DType::BOOL).tril(0)?;
            keep.where_(&scores, f64::NEG_INFINITY)?
        } else {
            scores
        };
        let scores = match &opts.mask {
            None => scores,
            Some(m) => {
                let ms = m.graph()?.shape.to_vec();
                let joint = broadcast_shapes(op, scores.shape(), &ms);
                if joint.ok().as_deref() != Some(scores.shape()) {
                    return Err(fail(format!(
                        "the mask {ms:?} does not broadcast to the scores {:?}",
                        scores.shape()
                    )));
                }
                if m.dtype().is_bool() {
                    m.where_(&scores, f64::NEG_INFINITY)?
                } else {
                    scores.add(m)?
                }
            }
        };
        let p = opts.dropout_p;
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::Argument {
                op: op.into(),
                message: format!("dropout_p {p} is not in [0, 1] (query {q:?}, key {k:?})"),
                location,
            });
        }
        let weights = scores.softmax(-1)?;
        let weights = if p > 0.0 {
            let dtype = weights.dtype();
            let draw = Tensor::rand_seeded(weights.shape(), crate::DType::F32, opts.dropout_seed);
            let kept = weights.mul(1.0 / (1.0 - p))?;
            let zero = Tensor::zeros(&[], dtype);
            draw.ge(p)?.where_(&kept, &zero)?
        } else {
            weights
        };
        weights.matmul(&value)
    }
}
