//! Adam and AdamW (PyTorch's `torch.optim.Adam` and `AdamW`).

use super::Optimizer;
use super::{as_dtype_of, checked_coefficient, checked_params, scalar_buffer, zeros_like};
use crate::{Result, Tensor};

/// The settings of [`Adam`].
#[derive(Clone, Copy, Debug)]
pub struct AdamOptions {
    /// Learning rate (default 0.001).
    pub lr: f64,
    /// Decay rates of the first and second moment estimates (default
    /// 0.9, 0.999).
    pub betas: (f64, f64),
    /// Added to the denominator (default 1e-8).
    pub eps: f64,
    /// Weight decay (default 0): added to the gradient as an L2 penalty
    /// (Adam), or subtracted from the parameter as `lr * weight_decay *
    /// p` (AdamW, `decoupled`).
    pub weight_decay: f64,
    /// AdamW's decoupled weight decay.
    pub decoupled: bool,
}

impl Default for AdamOptions {
    fn default() -> Self {
        AdamOptions {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            decoupled: false,
        }
    }
}

impl AdamOptions {
    /// AdamW's defaults (weight decay 0.01, decoupled).
    pub fn adamw() -> AdamOptions {
        AdamOptions {
            weight_decay: 0.01,
            decoupled: true,
            ..AdamOptions::default()
        }
    }
}

/// Adam: `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g²`,
/// `p -= lr * m̂ / (sqrt(v̂) + eps)` with the bias-corrected `m̂ = m / (1 -
/// b1^t)`, `v̂ = v / (1 - b2^t)`. The powers `b1^t`, `b2^t` are buffers
/// updated by each step, so every step runs the same graph.
pub struct Adam {
    params: Vec<Tensor>,
    opts: AdamOptions,
    lr: Tensor,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    /// `b1^t` and `b2^t` after `t` steps.
    powers: (Tensor, Tensor),
}

impl Adam {
    /// An optimizer of `params` (realized float tensors).
    #[track_caller]
    pub fn new(params: &[Tensor], opts: AdamOptions) -> Result<Adam> {
        let op = if opts.decoupled { "adamw" } else { "adam" };
        let params = checked_params(op, params)?;
        checked_coefficient(op, "lr", opts.lr, 0.0, f64::MAX)?;
        checked_coefficient(op, "betas.0", opts.betas.0, 0.0, 1.0 - f64::EPSILON)?;
        checked_coefficient(op, "betas.1", opts.betas.1, 0.0, 1.0 - f64::EPSILON)?;
        checked_coefficient(op, "eps", opts.eps, 0.0, f64::MAX)?;
        checked_coefficient(op, "weight_decay", opts.weight_decay, 0.0, f64::MAX)?;
        Ok(Adam {
            m: params.iter().map(zeros_like).collect::<Result<_>>()?,
            v: params.iter().map(zeros_like).collect::<Result<_>>()?,
            params,
            opts,
            lr: scalar_buffer(opts.lr)?,
            powers: (scalar_buffer(1.0)?, scalar_buffer(1.0)?),
        })
    }

    /// AdamW: Adam with decoupled weight decay (`opts.decoupled` set).
    #[track_caller]
    pub fn adamw(params: &[Tensor], opts: AdamOptions) -> Result<Adam> {
        Adam::new(
            params,
            AdamOptions {
                decoupled: true,
                ..opts
            },
        )
    }
}

impl Optimizer for Adam {
    fn params(&self) -> &[Tensor] {
        &self.params
    }

    #[track_caller]
    fn updates(&mut self, grads: &[Tensor]) -> Result<Vec<(Tensor, Tensor)>> {
        let op = if self.opts.decoupled { "adamw" } else { "adam" };
        super::check_grads(op, &self.params, grads)?;
        let (b1, b2) = self.opts.betas;
        let p1 = self.powers.0.mul(b1)?;
        let p2 = self.powers.1.mul(b2)?;
        // lr / (1 - b1^t) and 1 / (1 - b2^t), one element each.
        let step_size = self.lr.div(&p1.neg()?.add(1.0)?)?;
        let v_scale = p2.neg()?.add(1.0)?.reciprocal()?;
        let mut out = Vec::with_capacity(self.params.len() * 3 + 2);
        for (i, (p, g)) in self.params.iter().zip(grads).enumerate() {
            let mut g = g.clone();
            let mut base = p.clone();
            if self.opts.weight_decay != 0.0 {
                if self.opts.decoupled {
                    let shrink = as_dtype_of(&self.lr, p)?.mul(self.opts.weight_decay)?;
                    base = p.sub(&p.mul(&shrink)?)?;
                } else {
                    g = g.add(&p.mul(self.opts.weight_decay)?)?;
                }
            }
            let m = self.m[i].mul(b1)?.add(&g.mul(1.0 - b1)?)?;
            let v = self.v[i].mul(b2)?.add(&g.mul(&g)?.mul(1.0 - b2)?)?;
            let denom = v
                .mul(&as_dtype_of(&v_scale, p)?)?
                .sqrt()?
                .add(self.opts.eps)?;
            let update = m.mul(&as_dtype_of(&step_size, p)?)?.div(&denom)?;
            out.push((p.clone(), base.sub(&update)?));
            out.push((self.m[i].clone(), m));
            out.push((self.v[i].clone(), v));
        }
        out.push((self.powers.0.clone(), p1));
        out.push((self.powers.1.clone(), p2));
        Ok(out)
    }

    fn lr(&self) -> f64 {
        self.opts.lr
    }

    #[track_caller]
    fn set_lr(&mut self, lr: f64) -> Result<()> {
        let op = if self.opts.decoupled { "adamw" } else { "adam" };
        checked_coefficient(op, "lr", lr, 0.0, f64::MAX)?;
        self.lr = scalar_buffer(lr)?;
        self.opts.lr = lr;
        Ok(())
    }
}
