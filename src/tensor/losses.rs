//! Loss functions of `torch.nn.functional`, with PyTorch's options
//! (`reduction`, `weight`, `ignore_index`, `label_smoothing`,
//! `pos_weight`). Class scores have their classes on axis 1 (axis 0 for
//! a 1-D input), as in PyTorch.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{class_loss_shape, loss_shape, weighted_loss_shape};
use morok_core::ScalarType;

pub use morok_core::tensor_ops::Reduction;

/// Options of [`Tensor::nll_loss`] and [`Tensor::cross_entropy_with`].
#[derive(Clone, Debug, Default)]
pub struct ClassLossOptions {
    /// `weight`: a 1-D tensor of one weight per class.
    pub weight: Option<Tensor>,
    /// `ignore_index`: targets equal to it contribute nothing (and do
    /// not count for the mean).
    pub ignore_index: Option<i64>,
    /// `label_smoothing` in `[0, 1]` (cross-entropy only).
    pub label_smoothing: f64,
    /// How the per-element losses are combined.
    pub reduction: Reduction,
}

/// `max(log(v), -100)`, PyTorch's clamped logarithm of the binary
/// cross-entropy, with the logarithm taken of 1 where `v` is 0: the value
/// there is -100 all the same, and the gradient 0 rather than `0 · ∞ =
/// NaN` (predictions of exactly 0 or 1, as a saturated `sigmoid` gives).
#[track_caller]
fn clamped_log(v: &Tensor) -> Result<Tensor> {
    let zero = v.eq(0.0)?;
    let log = zero.where_(1.0, v)?.log()?.maximum(-100.0)?;
    zero.where_(-100.0, &log)
}

impl Tensor {
    /// Applies `reduction` to per-element losses.
    #[track_caller]
    fn reduce_loss(&self, reduction: Reduction) -> Result<Tensor> {
        match reduction {
            Reduction::None => Ok(self.clone()),
            Reduction::Mean => self.mean(None, false),
            Reduction::Sum => self.sum(None, false),
        }
    }

    /// Checks that `target` has `self`'s shape (errors name `op`).
    #[track_caller]
    fn same_shape(&self, op: &str, target: &Tensor) -> Result<()> {
        let (a, b) = (self.graph()?.shape.clone(), target.graph()?.shape.clone());
        loss_shape(op, &a, &b, true).located()?;
        Ok(())
    }

    /// The shape checks of a weighted loss: the target has the input's
    /// shape and each weight broadcasts to it (errors name `op`).
    #[track_caller]
    fn weighted_shape(&self, op: &str, target: &Tensor, weights: &[Option<&Tensor>]) -> Result<()> {
        let (a, b) = (self.graph()?.shape.clone(), target.graph()?.shape.clone());
        let mut shapes = Vec::with_capacity(weights.len());
        for w in weights {
            shapes.push(match w {
                Some(w) => Some(w.graph()?.shape.clone()),
                None => None,
            });
        }
        let views: Vec<Option<&[usize]>> = shapes.iter().map(|s| s.as_deref()).collect();
        weighted_loss_shape(op, &a, &b, &views, true).located()?;
        Ok(())
    }

    /// Mean squared error, `(x - y)²` reduced.
    #[track_caller]
    pub fn mse_loss(&self, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
        self.same_shape("mse_loss", target)?;
        let d = self.to_float()?.sub(target)?;
        d.mul(&d)?.reduce_loss(reduction)
    }

    /// Mean absolute error, `|x - y|` reduced.
    #[track_caller]
    pub fn l1_loss(&self, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
        self.same_shape("l1_loss", target)?;
        self.to_float()?.sub(target)?.abs()?.reduce_loss(reduction)
    }

    /// Huber-like loss: `0.5 d² / beta` where `|d| < beta`, else
    /// `|d| - 0.5 beta` (`beta = 0` is the L1 loss).
    #[track_caller]
    pub fn smooth_l1_loss(
        &self,
        target: &Tensor,
        reduction: Reduction,
        beta: f64,
    ) -> Result<Tensor> {
        self.same_shape("smooth_l1_loss", target)?;
        if beta < 0.0 || beta.is_nan() {
            return Err(Error::argument(
                "smooth_l1_loss",
                format!("beta {beta} is negative"),
            ));
        }
        let d = self.to_float()?.sub(target)?.abs()?;
        if beta == 0.0 {
            return d.reduce_loss(reduction);
        }
        let quad = d.mul(&d)?.mul(0.5 / beta)?;
        d.lt(beta)?
            .where_(&quad, &d.sub(0.5 * beta)?)?
            .reduce_loss(reduction)
    }

    /// Binary cross-entropy of probabilities `self` against `target`:
    /// `-w (y log x + (1 - y) log(1 - x))`, with the logarithms clamped
    /// at -100 as in PyTorch.
    #[track_caller]
    pub fn binary_cross_entropy(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: Reduction,
    ) -> Result<Tensor> {
        self.weighted_shape("binary_cross_entropy", target, &[weight])?;
        let x = self.to_float()?;
        let lx = clamped_log(&x)?;
        let l1x = clamped_log(&x.neg()?.add(1.0)?)?;
        let y = target.cast_to(x.graph()?.dtype)?;
        let loss = y.mul(&lx)?.add(&y.neg()?.add(1.0)?.mul(&l1x)?)?.neg()?;
        let loss = match weight {
            Some(w) => loss.mul(w)?,
            None => loss,
        };
        loss.reduce_loss(reduction)
    }

    /// Binary cross-entropy of logits `self`, computed stably:
    /// `(1 - y) x + (1 + (p - 1) y) (log(1 + e^-|x|) + max(-x, 0))`, with
    /// `p` the `pos_weight` (broadcast over the classes).
    #[track_caller]
    pub fn binary_cross_entropy_with_logits(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        pos_weight: Option<&Tensor>,
        reduction: Reduction,
    ) -> Result<Tensor> {
        self.weighted_shape(
            "binary_cross_entropy_with_logits",
            target,
            &[weight, pos_weight],
        )?;
        let x = self.to_float()?;
        let y = target.cast_to(x.graph()?.dtype)?;
        let soft = x
            .abs()?
            .neg()?
            .exp()?
            .log1p()?
            .add(&x.neg()?.maximum(0.0)?)?;
        let scale = match pos_weight {
            Some(p) => p.sub(1.0)?.mul(&y)?.add(1.0)?,
            None => y.filled(1.0)?,
        };
        let loss = y.neg()?.add(1.0)?.mul(&x)?.add(&scale.mul(&soft)?)?;
        let loss = match weight {
            Some(w) => loss.mul(w)?,
            None => loss,
        };
        loss.reduce_loss(reduction)
    }

    /// Scores `[N, C, ...]` (or `[C]`) with the class axis moved last, the
    /// class count, and checks of the target's shape, dtype and the
    /// weight (errors name `op`). `int_target`: class indices (else
    /// probabilities of the scores' shape).
    #[track_caller]
    fn class_scores(
        &self,
        op: &str,
        target: &Tensor,
        opts: &ClassLossOptions,
        int_target: bool,
    ) -> Result<(Tensor, usize)> {
        let (xs, ts) = (self.graph()?.shape.clone(), target.graph()?.shape.clone());
        let weight = match &opts.weight {
            Some(w) => Some(w.graph()?.shape.clone()),
            None => None,
        };
        let kept = opts.reduction == Reduction::None;
        class_loss_shape(op, &xs, &ts, weight.as_deref(), int_target, kept).located()?;
        let c_axis = if xs.len() == 1 { 0 } else { 1 };
        let classes = xs[c_axis];
        let mut perm: Vec<usize> = (0..xs.len()).filter(|&a| a != c_axis).collect();
        perm.push(c_axis);
        Ok((self.to_float()?.permute_to(&perm)?, classes))
    }

    /// Negative log-likelihood of log-probabilities `self` (`[N, C, ...]`
    /// or `[C]`) at integer class `target`s (`[N, ...]` or `[]`): `-w[t] ·
    /// x[t]`. With `Mean` the sum is divided by the summed weights of the
    /// targets not ignored. A target outside `0..C` contributes 0.
    #[track_caller]
    pub fn nll_loss(&self, target: &Tensor, opts: &ClassLossOptions) -> Result<Tensor> {
        let op = "nll_loss";
        super::indexing::expect_dtype(
            op,
            "label tensor",
            target,
            ScalarType::is_int,
            "an integer type",
        )?;
        let (x, classes) = self.class_scores(op, target, opts, true)?;
        x.nll_last(op, target, classes, opts, 0.0)
    }

    /// NLL over the last axis of `x` (log-probabilities), with label
    /// smoothing `eps` (the mean of `-w·x` over the classes, weighted by
    /// `eps`).
    #[track_caller]
    fn nll_last(
        &self,
        op: &str,
        target: &Tensor,
        classes: usize,
        opts: &ClassLossOptions,
        eps: f64,
    ) -> Result<Tensor> {
        let ids = Tensor::counting(op, classes, ScalarType::I64)?;
        let t = target.cast_to(ScalarType::I64)?;
        let onehot = t.unsqueeze(-1)?.eq(&ids)?;
        let w = match &opts.weight {
            Some(w) => w.cast_to(self.graph()?.dtype)?,
            None => Tensor::constant(
                morok_core::ConstValue::Float(1.0),
                self.graph()?.dtype,
                &[classes],
            ),
        };
        let keep = match opts.ignore_index {
            Some(i) => t.ne(i)?,
            None => Tensor::constant(
                morok_core::ConstValue::Bool(true),
                ScalarType::Bool,
                t.shape(),
            ),
        };
        let wx = self.mul(&w)?;
        let picked = onehot.where_(&wx, 0.0)?.sum(Some(&[-1]), false)?;
        let wt = onehot.where_(&w, 0.0)?.sum(Some(&[-1]), false)?;
        let mut loss = picked.neg()?;
        if eps > 0.0 {
            let smooth = wx.sum(Some(&[-1]), false)?.neg()?.div(classes as f64)?;
            loss = loss.mul(1.0 - eps)?.add(&smooth.mul(eps)?)?;
        }
        let loss = keep.where_(&loss, 0.0)?;
        match opts.reduction {
            Reduction::Mean => {
                let total = keep.where_(&wt, 0.0)?.sum(None, false)?;
                loss.sum(None, false)?.div(&total)
            }
            r => loss.reduce_loss(r),
        }
    }

    /// PyTorch's `cross_entropy(input, target, weight, ignore_index,
    /// reduction, label_smoothing)`: scores `[N, C, ...]` (or `[C]`)
    /// against integer class indices (`[N, ...]`) or class probabilities
    /// (the input's shape, a float tensor).
    #[track_caller]
    pub fn cross_entropy_with(&self, target: &Tensor, opts: &ClassLossOptions) -> Result<Tensor> {
        let op = "cross_entropy";
        let eps = opts.label_smoothing;
        if !(0.0..=1.0).contains(&eps) {
            return Err(Error::argument(
                op,
                format!("label_smoothing {eps} is not in [0, 1]"),
            ));
        }
        let int_target = !target.graph()?.dtype.is_float();
        let (x, classes) = self.class_scores(op, target, opts, int_target)?;
        let logp = x.log_softmax(-1)?;
        if int_target {
            return logp.nll_last(op, target, classes, opts, eps);
        }
        if opts.ignore_index.is_some() {
            return Err(Error::argument(
                op,
                "ignore_index needs class-index targets",
            ));
        }
        // Probabilities: move the class axis last like the scores.
        let r = target.ndim();
        let c_axis = if r == 1 { 0 } else { 1 };
        let mut perm: Vec<usize> = (0..r).filter(|&a| a != c_axis).collect();
        perm.push(c_axis);
        let p = target.cast_to(logp.graph()?.dtype)?.permute_to(&perm)?;
        let p = p.mul(1.0 - eps)?.add(eps / classes as f64)?;
        let wlogp = match &opts.weight {
            Some(w) => logp.mul(w)?,
            None => logp,
        };
        let loss = p.mul(&wlogp)?.sum(Some(&[-1]), false)?.neg()?;
        loss.reduce_loss(opts.reduction)
    }
}
