//! The output shape of `scaled_dot_product_attention`,
//! [`attention_shape`].

use super::rules::broadcast_shapes;
use super::{Dim, Dims, ShapeError};

/// Scaled dot-product attention of the query `q` (`[.., Hq, L, E]`) over
/// the key `k` (`[.., H, S, E]`) and value `v` (`[.., H, S, Ev]`): the
/// last axes match, the key and value have one sequence length and head
/// count, the query heads equal it (or, with `enable_gqa`, are a
/// multiple of it), and the batch axes broadcast. The result is `[..,
/// Hq, L, Ev]` (the batch axes broadcast).
pub fn attention_shape<D: Dim>(
    q: &[D],
    k: &[D],
    v: &[D],
    enable_gqa: bool,
) -> Result<Dims<D>, ShapeError> {
    let op = "scaled_dot_product_attention";
    let fail = |why: String| ShapeError::new(op, &[q, k, v], why);
    if q.len() < 2 || k.len() < 2 || v.len() < 2 {
        return Err(fail("query, key and value need at least 2 axes".into()));
    }
    let (e, s) = (&q[q.len() - 1], &k[k.len() - 2]);
    if &k[k.len() - 1] != e || &v[v.len() - 2] != s {
        return Err(fail(
            "the query's and key's last axes must match, and the key and value must have one \
             sequence length"
                .into(),
        ));
    }
    let heads = |t: &[D]| {
        if t.len() >= 3 {
            t[t.len() - 3].clone()
        } else {
            D::lit(1)
        }
    };
    let (hq, hk, hv) = (heads(q), heads(k), heads(v));
    if hk != hv {
        return Err(fail(format!("the key has {hk} heads, the value {hv}")));
    }
    if hq != hk {
        // Grouping repeats the key's and value's head axes: all three have
        // one.
        let multiple = hk.as_lit() != Some(0)
            && hq.div_exact(&hk).is_some()
            && q.len() >= 3
            && k.len() >= 3
            && v.len() >= 3;
        if !enable_gqa || !multiple {
            return Err(fail(format!(
                "{hq} query heads for {hk} key/value heads{}",
                if enable_gqa {
                    " (not a multiple)"
                } else {
                    " without enable_gqa"
                }
            )));
        }
    }
    let batch = |t: &[D]| t[..t.len() - 3.min(t.len())].to_vec();
    broadcast_shapes(op, &batch(q), &batch(k))
        .map_err(|_| fail("the batch axes do not broadcast".into()))?;
    // As computed: the key and value with their heads repeated to the
    // query's, `q @ k^T`, then the scores times the value.
    let with_heads = |t: &[D]| -> Vec<D> {
        let mut t = t.to_vec();
        if t.len() >= 3 {
            let h = t.len() - 3;
            t[h] = hq.clone();
        }
        t
    };
    let mut key_t = with_heads(k);
    let r = key_t.len();
    key_t.swap(r - 2, r - 1);
    let scores = super::rules::matmul_shape(q, &key_t)?;
    let value = with_heads(v);
    super::rules::matmul_shape(&scores, &value)
}
