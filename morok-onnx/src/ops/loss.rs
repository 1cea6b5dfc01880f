//! Loss ops: `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss`
//! (a log-softmax over the class axis, then the former), with per-class
//! weights, `ignore_index` and the `none` / `sum` / `mean` reductions
//! (`mean` divides by the total weight of the counted targets).

use super::indexing::take;
use super::{invalid, OpCtx, OpFn, OpResult};
use morok::{DType, Tensor};

/// The ops of this family.
pub(super) const TABLE: &[(&str, OpFn)] = &[
    ("NegativeLogLikelihoodLoss", negative_log_likelihood_loss),
    ("SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss),
];

/// The loss of log-probabilities `logp` (`[N, C, ...]`) for `target`.
fn nll(
    ctx: &OpCtx<'_>,
    logp: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
) -> OpResult<Tensor> {
    if logp.ndim() < 2 || target.ndim() + 1 != logp.ndim() {
        invalid!("input {:?} and target {:?}", logp.shape(), target.shape());
    }
    let t = target.cast(DType::I64)?;
    let counted = match ctx.attr("ignore_index") {
        Some(a) => t.ne(a.i.unwrap_or(0))?,
        None => t.full_like(true)?,
    };
    let safe = counted.where_(&t, 0i64)?;
    let picked = logp.gather(1, &safe.unsqueeze(1)?)?.squeeze(1)?;
    let w = match weight {
        Some(w) => take(w, 0, &safe)?,
        None => picked.ones_like()?,
    };
    let w = counted.where_(&w, 0.0)?.cast(logp.dtype())?;
    let loss = picked.mul(&w)?.neg()?;
    Ok(match ctx.string("reduction", "mean")?.as_str() {
        "none" => loss,
        "sum" => loss.sum(None, false)?,
        "mean" => loss.sum(None, false)?.div(&w.sum(None, false)?)?,
        other => invalid!("reduction {other:?}"),
    })
}

/// Computes in `f32` at least (for half-float inputs).
fn wide(t: &Tensor) -> OpResult<Tensor> {
    Ok(if t.dtype() == DType::F64 {
        t.clone()
    } else {
        t.cast(DType::F32)?
    })
}

fn negative_log_likelihood_loss(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let weight = ctx.opt(2).map(wide).transpose()?;
    let loss = nll(ctx, &wide(x)?, ctx.input(1)?, weight.as_ref())?;
    Ok(vec![loss.cast(x.dtype())?])
}

fn softmax_cross_entropy_loss(ctx: &OpCtx<'_>) -> OpResult {
    let x = ctx.input(0)?;
    let logp = wide(x)?.log_softmax(1)?;
    let weight = ctx.opt(2).map(wide).transpose()?;
    let loss = nll(ctx, &logp, ctx.input(1)?, weight.as_ref())?;
    Ok(vec![loss.cast(x.dtype())?, logp.cast(x.dtype())?])
}
