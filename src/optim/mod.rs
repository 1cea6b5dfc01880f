//! Optimizers and learning-rate schedules.
//!
//! An optimizer holds the parameters it updates (realized float tensors,
//! usually a model's `parameters()`) and its state (momentum buffers,
//! moment estimates), all as device buffers. A step builds the update of
//! every parameter and state buffer as lazy tensors and writes them with
//! one [`Tensor::assign_all`], together with whatever else the caller
//! wants realized (the loss): the forward pass, the backward pass and the
//! update run as one schedule, and from the second step on the schedule
//! cache and the kernel cache replay it with nothing built or compiled.
//!
//! The learning rate and the step counters live in one-element buffers,
//! not in the graph's constants, so changing the learning rate (a
//! schedule, [`LrSchedule`]) does not change the graph's structure.
//!
//! ```
//! use morok::optim::{Optimizer, Sgd, SgdOptions};
//! use morok::Tensor;
//! let w = Tensor::from_slice(&[1.0f32, -1.0]);
//! let mut opt = Sgd::new(&[w.clone()], SgdOptions { lr: 0.5, ..SgdOptions::default() })?;
//! let loss = w.mul(&w)?.sum(None, false)?; // gradient 2w
//! let loss = opt.minimize(&loss)?;
//! assert_eq!(loss.to_vec::<f32>()?, [2.0]);
//! assert_eq!(w.to_vec::<f32>()?, [0.0, 0.0]); // w - 0.5 * 2w
//! # Ok::<(), morok::Error>(())
//! ```

mod adam;
mod schedule;
mod sgd;

pub use adam::{Adam, AdamOptions};
pub use schedule::{CosineWarmup, LrSchedule, StepLr};
pub use sgd::{Sgd, SgdOptions};

use crate::{Error, Result, Tensor};

/// What every optimizer does; [`Optimizer::updates`] is its rule, the
/// rest is shared.
pub trait Optimizer {
    /// The parameters, in the order given at construction.
    fn params(&self) -> &[Tensor];

    /// The new value of every parameter and state buffer (`(target,
    /// value)` pairs, lazy) for one step with `grads` (one per parameter,
    /// in order).
    fn updates(&mut self, grads: &[Tensor]) -> Result<Vec<(Tensor, Tensor)>>;

    /// The current learning rate.
    fn lr(&self) -> f64;

    /// Sets the learning rate for the next steps (no recompilation: the
    /// rate is read from a buffer).
    fn set_lr(&mut self, lr: f64) -> Result<()>;

    /// One step that minimizes `loss` (a float scalar): its gradients with
    /// respect to the parameters, the update, and the loss itself are
    /// realized together in one schedule. Returns the realized loss.
    #[track_caller]
    fn minimize(&mut self, loss: &Tensor) -> Result<Tensor> {
        self.minimize_with(loss, &[])
    }

    /// [`Optimizer::minimize`] that also writes `state` (`(target, value)`
    /// pairs: the layers' running statistics and random keys, from
    /// [`crate::nn::Module::take_updates`]) in the same schedule.
    #[track_caller]
    fn minimize_with(&mut self, loss: &Tensor, state: &[(Tensor, Tensor)]) -> Result<Tensor> {
        let params: Vec<&Tensor> = self.params().iter().collect();
        let grads = loss.gradient(&params)?;
        let pairs = self.updates(&grads)?;
        let refs: Vec<(&Tensor, &Tensor)> =
            pairs.iter().chain(state).map(|(t, v)| (t, v)).collect();
        Ok(Tensor::assign_all(&refs, &[loss])?.remove(0))
    }

    /// PyTorch's `step()`: updates the parameters from their
    /// [`Tensor::grad`] (accumulated by [`Tensor::backward`]). Errors when
    /// a parameter has no gradient.
    #[track_caller]
    fn step(&mut self) -> Result<()> {
        self.step_with(&[]).map(|_| ())
    }

    /// [`Optimizer::step`], realizing `also` (the loss, metrics) in the
    /// same schedule; returns them realized.
    #[track_caller]
    fn step_with(&mut self, also: &[&Tensor]) -> Result<Vec<Tensor>> {
        let mut grads = Vec::with_capacity(self.params().len());
        for (i, p) in self.params().iter().enumerate() {
            match p.grad() {
                Some(g) => grads.push(g),
                None => {
                    return Err(Error::argument(
                        "step",
                        format!(
                            "parameter {i} {:?} has no gradient: call `backward` on a loss that uses it first",
                            p.shape()
                        ),
                    ))
                }
            }
        }
        let pairs = self.updates(&grads)?;
        let refs: Vec<(&Tensor, &Tensor)> = pairs.iter().map(|(t, v)| (t, v)).collect();
        Tensor::assign_all(&refs, also)
    }

    /// Forgets every parameter's accumulated gradient.
    fn zero_grad(&self) {
        for p in self.params() {
            p.zero_grad();
        }
    }
}

/// Checks an optimizer's parameters (realized float tensors, each once)
/// and marks them as requiring gradients.
/// Errors name `op` (the optimizer).
#[track_caller]
fn checked_params(op: &str, params: &[Tensor]) -> Result<Vec<Tensor>> {
    let mut seen = std::collections::HashSet::new();
    for (i, p) in params.iter().enumerate() {
        if let Some(e) = p.error() {
            return Err(e.clone());
        }
        if !p.dtype().is_float() {
            return Err(Error::dtype(
                op,
                format!(
                    "parameter {i} {:?} is {}: only float tensors can be optimized",
                    p.shape(),
                    p.dtype()
                ),
            ));
        }
        match p.realized_buffer() {
            Some(id) if seen.insert(id) => {}
            Some(_) => {
                return Err(Error::argument(
                    op,
                    format!("parameter {i} {:?} is given twice", p.shape()),
                ))
            }
            None => {
                return Err(Error::argument(
                    op,
                    format!(
                        "parameter {i} {:?} is not a realized tensor (a lazy result cannot be updated in place): realize it first",
                        p.shape()
                    ),
                ))
            }
        }
    }
    // PyTorch's parameters require gradients: `backward` finds them, and a
    // DSL kernel called on them returns its lazy, differentiable result.
    params.iter().map(|p| p.requires_grad(true)).collect()
}

/// A realized buffer of zeros shaped and typed like `p` (optimizer state).
#[track_caller]
fn zeros_like(p: &Tensor) -> Result<Tensor> {
    Tensor::zeros(p.shape(), p.dtype()).contiguous()?.realize()
}

/// A realized one-element f32 buffer holding `v` (a learning rate, a
/// running power of a decay rate).
#[track_caller]
fn scalar_buffer(v: f64) -> Result<Tensor> {
    Tensor::from_slice(&[v as f32]).realize()
}

/// The one-element f32 buffer `s` cast to `like`'s dtype (broadcasts
/// against it).
#[track_caller]
fn as_dtype_of(s: &Tensor, like: &Tensor) -> Result<Tensor> {
    s.cast(like.dtype())
}

/// Checks the gradients given to a step: one per parameter, each of its
/// parameter's shape and dtype.
#[track_caller]
fn check_grads(op: &str, params: &[Tensor], grads: &[Tensor]) -> Result<()> {
    if grads.len() != params.len() {
        return Err(Error::argument(
            op,
            format!("{} gradients for {} parameters", grads.len(), params.len()),
        ));
    }
    for (i, (p, g)) in params.iter().zip(grads).enumerate() {
        if let Some(e) = g.error() {
            return Err(e.clone());
        }
        if p.shape() != g.shape() || p.dtype() != g.dtype() {
            return Err(Error::argument(
                op,
                format!(
                    "gradient {i} is {:?} {} but its parameter is {:?} {}",
                    g.shape(),
                    g.dtype(),
                    p.shape(),
                    p.dtype()
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a rate or coefficient: finite and in `[lo, hi]`.
#[track_caller]
fn checked_coefficient(op: &str, name: &str, v: f64, lo: f64, hi: f64) -> Result<f64> {
    if !v.is_finite() || v < lo || v > hi {
        return Err(Error::argument(
            op,
            format!("{name} = {v} is outside [{lo}, {hi}]"),
        ));
    }
    Ok(v)
}
