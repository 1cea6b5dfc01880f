//! `Attention` (opset 23) and `RotaryEmbedding`, following the reference
//! evaluator's order of operations: heads split from 3-D inputs, past
//! keys and values concatenated, grouped K/V heads tiled (`np.tile`, head
//! `h` of the query reads K/V head `h mod kv_heads`), `Q·√s` times `K·√s`,
//! then the mask bias, softcap and softmax.

use super::indexing::take;
use super::{host_ints, invalid, unsupported, OpCtx, OpFn, OpResult};
use morok::{DType, Slice, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("Attention", attention),
    ("RotaryEmbedding", rotary_embedding),
];

/// `[B, S, H·D]` as `[B, H, S, D]`.
fn split_heads(t: &Tensor, heads: i64) -> OpResult<Tensor> {
    let [b, s, hidden] = *t.shape() else {
        invalid!("input of shape {:?}, expected rank 3", t.shape());
    };
    if heads <= 0 || hidden % heads as usize != 0 {
        invalid!("{hidden} features for {heads} heads");
    }
    let (b, s, h) = (b as isize, s as isize, heads as isize);
    Ok(t.reshape(&[b, s, h, hidden as isize / h])?
        .permute(&[0, 2, 1, 3])?)
}

fn attention(ctx: &OpCtx<'_>) -> OpResult {
    let (q, k, v) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let three_d = q.ndim() == 3;
    let (q4, k4, v4) = if three_d {
        let qh = ctx.int("q_num_heads", 0)?;
        let kvh = ctx.int("kv_num_heads", 0)?;
        (
            split_heads(q, qh)?,
            split_heads(k, kvh)?,
            split_heads(v, kvh)?,
        )
    } else if q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 {
        (q.clone(), k.clone(), v.clone())
    } else {
        invalid!("Q {:?}, K {:?}, V {:?}", q.shape(), k.shape(), v.shape());
    };
    if ctx.opt(6).is_some() {
        unsupported!("nonpad_kv_seqlen");
    }
    let present_k = match ctx.opt(4) {
        Some(p) => Tensor::cat(&[p, &k4], 2)?,
        None => k4,
    };
    let present_v = match ctx.opt(5) {
        Some(p) => Tensor::cat(&[p, &v4], 2)?,
        None => v4,
    };
    let (hq, hk) = (q4.shape()[1], present_k.shape()[1]);
    let (kk, vv) = if hq != hk && hk > 0 && hq % hk == 0 {
        let reps = [1, hq / hk, 1, 1];
        (present_k.repeat(&reps)?, present_v.repeat(&reps)?)
    } else {
        (present_k.clone(), present_v.clone())
    };
    let head = q4.shape()[3] as f64;
    let scale = match ctx.attr("scale") {
        Some(a) => a.f.unwrap_or(0.0) as f64,
        None => 1.0 / head.sqrt(),
    }
    .sqrt();
    let dtype = q.dtype();
    let qk = q4.mul(scale)?.matmul(&kk.transpose(2, 3)?.mul(scale)?)?;
    let (s, t) = (q4.shape()[2], kk.shape()[2]);
    let mut bias = Tensor::zeros(&[s, t], dtype);
    let mask = match ctx.opt(3) {
        Some(m) => {
            let width = m.shape().last().copied().unwrap_or(0);
            let mut pads = vec![(0isize, 0isize); m.ndim()];
            if let Some(last) = pads.last_mut() {
                last.1 = t as isize - width as isize;
            }
            let m = if m.dtype().is_bool() {
                let padded = super::shape::pad_axes(m, &pads, "constant", 0.0)?;
                padded.where_(0.0, f64::NEG_INFINITY)?.cast(dtype)?
            } else {
                super::shape::pad_axes(m, &pads, "constant", f64::NEG_INFINITY)?
            };
            Some(m)
        }
        None => None,
    };
    if let Some(m) = &mask {
        bias = bias.add(m)?;
    }
    if ctx.int("is_causal", 0)? != 0 {
        let keep = Tensor::ones(&[s, t], DType::F32).tril(0)?;
        bias = bias.add(&keep.eq(0.0)?.where_(f64::NEG_INFINITY, 0.0)?.cast(dtype)?)?;
    }
    let mode = ctx.int("qk_matmul_output_mode", 0)?;
    let mut scores = qk.add(&bias)?;
    let mut qk_out = if mode == 1 { scores.clone() } else { qk };
    let softcap = ctx.float("softcap", 0.0)? as f64;
    if softcap > 0.0 {
        scores = scores.div(softcap)?.tanh()?.mul(softcap)?;
        if mode == 2 {
            qk_out = scores.clone();
        }
    }
    let probs = scores.softmax(-1)?;
    if mode == 3 {
        qk_out = probs.clone();
    }
    let mut y = probs.matmul(&vv)?.cast(dtype)?;
    if three_d {
        let (b, sq) = (y.shape()[0] as isize, y.shape()[2] as isize);
        y = y.permute(&[0, 2, 1, 3])?.reshape(&[b, sq, -1])?;
    }
    Ok(vec![y, present_k, present_v, qk_out.cast(dtype)?])
}

fn rotary_embedding(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let (cos_cache, sin_cache) = (ctx.input(1)?, ctx.input(2)?);
    let original = x.shape().to_vec();
    // [B, S, H, D]
    let x4 = match x.ndim() {
        4 => x.permute(&[0, 2, 1, 3])?,
        3 => {
            let heads = ctx.int("num_heads", 0)?;
            if heads <= 0 || original[2] % heads as usize != 0 {
                invalid!("num_heads {heads} for hidden size {}", original[2]);
            }
            let (b, s, h) = (original[0] as isize, original[1] as isize, heads as isize);
            x.reshape(&[b, s, h, original[2] as isize / h])?
        }
        _ => invalid!("input of shape {:?}", original),
    };
    let head = x4.shape()[3];
    let rot = match ctx.int("rotary_embedding_dim", 0)? {
        0 => head,
        d if d > 0 && d as usize <= head && d % 2 == 0 => d as usize,
        d => invalid!("rotary_embedding_dim {d} for head size {head}"),
    };
    let half = rot / 2;
    let (cos, sin) = match ctx.opt(3) {
        Some(pos) => {
            let ids = Tensor::from_vec(host_ints(pos)?, pos.shape())?;
            (take(cos_cache, 0, &ids)?, take(sin_cache, 0, &ids)?)
        }
        None => (cos_cache.clone(), sin_cache.clone()),
    };
    let narrow = |t: &Tensor| -> OpResult<Tensor> {
        let sl = [
            Slice::all(),
            Slice::all(),
            Slice {
                start: Some(0),
                end: Some(half as isize),
                step: 1,
            },
        ];
        Ok(t.slice(&sl)?.unsqueeze(2)?)
    };
    let (cos, sin) = (narrow(&cos)?, narrow(&sin)?);
    let last = |start: usize, end: usize, step: isize| {
        let mut sl = vec![Slice::all(); 4];
        sl[3] = Slice {
            start: Some(start as isize),
            end: Some(end as isize),
            step,
        };
        sl
    };
    let rotate = x4.slice(&last(0, rot, 1))?;
    let keep = x4.slice(&last(rot, head, 1))?;
    let interleaved = ctx.int("interleaved", 0)? != 0;
    let (x1, x2) = if interleaved {
        (
            rotate.slice(&last(0, rot, 2))?,
            rotate.slice(&last(1, rot, 2))?,
        )
    } else {
        (
            rotate.slice(&last(0, half, 1))?,
            rotate.slice(&last(half, rot, 1))?,
        )
    };
    let real = cos.mul(&x1)?.sub(&sin.mul(&x2)?)?;
    let imag = sin.mul(&x1)?.add(&cos.mul(&x2)?)?;
    let rotated = if interleaved {
        let dims: Vec<isize> = rotate.shape().iter().map(|&d| d as isize).collect();
        Tensor::stack(&[&real, &imag], -1)?.reshape(&dims)?
    } else {
        Tensor::cat(&[&real, &imag], -1)?
    };
    let out = Tensor::cat(&[&rotated, &keep], -1)?;
    let out = if original.len() == 3 {
        let dims: Vec<isize> = original.iter().map(|&d| d as isize).collect();
        out.reshape(&dims)?
    } else {
        out.permute(&[0, 2, 1, 3])?
    };
    Ok(vec![out.cast(x.dtype())?])
}
