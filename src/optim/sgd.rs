//! Stochastic gradient descent with momentum, Nesterov momentum and
//! weight decay (PyTorch's `torch.optim.SGD` without dampening).

use super::Optimizer;
use super::{as_dtype_of, checked_coefficient, checked_params, scalar_buffer, zeros_like};
use crate::{Error, Result, Tensor};

/// The settings of [`Sgd`].
#[derive(Clone, Copy, Debug)]
pub struct SgdOptions {
    /// Learning rate (default 0.01).
    pub lr: f64,
    /// Momentum factor in `[0, 1)` (default 0: plain SGD).
    pub momentum: f64,
    /// Nesterov momentum (needs `momentum > 0`).
    pub nesterov: bool,
    /// L2 penalty added to the gradient: `g + weight_decay * p`.
    pub weight_decay: f64,
}

impl Default for SgdOptions {
    fn default() -> Self {
        SgdOptions {
            lr: 0.01,
            momentum: 0.0,
            nesterov: false,
            weight_decay: 0.0,
        }
    }
}

/// SGD: `b = momentum * b + g`, `p -= lr * (nesterov ? g + momentum * b : b)`
/// (with `g` the gradient plus the weight decay term; without momentum,
/// `p -= lr * g`).
pub struct Sgd {
    params: Vec<Tensor>,
    opts: SgdOptions,
    lr: Tensor,
    /// Momentum buffers (empty without momentum).
    velocity: Vec<Tensor>,
}

impl Sgd {
    /// An optimizer of `params` (realized float tensors).
    #[track_caller]
    pub fn new(params: &[Tensor], opts: SgdOptions) -> Result<Sgd> {
        let params = checked_params("sgd", params)?;
        checked_coefficient("sgd", "lr", opts.lr, 0.0, f64::MAX)?;
        checked_coefficient("sgd", "momentum", opts.momentum, 0.0, 1.0 - f64::EPSILON)?;
        checked_coefficient("sgd", "weight_decay", opts.weight_decay, 0.0, f64::MAX)?;
        if opts.nesterov && opts.momentum == 0.0 {
            return Err(Error::argument(
                "sgd",
                "nesterov momentum needs momentum > 0",
            ));
        }
        let velocity = if opts.momentum > 0.0 {
            params.iter().map(zeros_like).collect::<Result<_>>()?
        } else {
            Vec::new()
        };
        Ok(Sgd {
            params,
            opts,
            lr: scalar_buffer(opts.lr)?,
            velocity,
        })
    }
}

impl Optimizer for Sgd {
    fn params(&self) -> &[Tensor] {
        &self.params
    }

    #[track_caller]
    fn updates(&mut self, grads: &[Tensor]) -> Result<Vec<(Tensor, Tensor)>> {
        super::check_grads("sgd", &self.params, grads)?;
        let mut out = Vec::with_capacity(self.params.len() * 2);
        for (i, (p, g)) in self.params.iter().zip(grads).enumerate() {
            let mut g = g.clone();
            if self.opts.weight_decay != 0.0 {
                g = g.add(&p.mul(self.opts.weight_decay)?)?;
            }
            let step = if self.opts.momentum > 0.0 {
                let b = &self.velocity[i];
                let nb = b.mul(self.opts.momentum)?.add(&g)?;
                let step = if self.opts.nesterov {
                    g.add(&nb.mul(self.opts.momentum)?)?
                } else {
                    nb.clone()
                };
                out.push((b.clone(), nb));
                step
            } else {
                g
            };
            let lr = as_dtype_of(&self.lr, p)?;
            out.push((p.clone(), p.sub(&step.mul(&lr)?)?));
        }
        Ok(out)
    }

    fn lr(&self) -> f64 {
        self.opts.lr
    }

    #[track_caller]
    fn set_lr(&mut self, lr: f64) -> Result<()> {
        checked_coefficient("sgd", "lr", lr, 0.0, f64::MAX)?;
        self.lr = scalar_buffer(lr)?;
        self.opts.lr = lr;
        Ok(())
    }
}
