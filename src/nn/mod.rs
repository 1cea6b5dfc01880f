//! Layers with parameters, for models written with the `Tensor` API and
//! trained with [`crate::optim`].
//!
//! `Linear`, `Conv1d`, `Conv2d`, `LayerNorm`, `Embedding`,
//! `SelfAttention` and `Sequential` are defined with the `model!` layers
//! ([`crate::dsl::layers`]); `BatchNorm2d`, `GroupNorm`, `Dropout` and
//! `MultiheadAttention` are here. `model!` structs hold any of them. All use PyTorch's
//! parameter names, shapes and default initialization, and their
//! parameters are realized tensors, so an optimizer updates them in place.
//!
//! Layers whose forward pass in training mode changes their own state
//! (batch normalization's running statistics, dropout's random key) do not
//! write it at once: the forward pass records the new values, and
//! [`Module::take_updates`] hands them to the step that realizes the loss
//! ([`crate::optim::Optimizer::minimize_with`]), so the update joins the
//! step's one schedule and the step's graph keeps its structure.
//!
//! ```
//! use morok::nn::{Dropout, Module};
//! use morok::optim::{Optimizer, Sgd, SgdOptions};
//! use morok::{DType, Tensor};
//! let w = Tensor::ones(&[4], DType::F32).realize()?;
//! let mut drop = Dropout::new(0.5, 7)?;
//! drop.train(true);
//! let mut opt = Sgd::new(&[w.clone()], SgdOptions::default())?;
//! let loss = drop.forward(&w)?.sum(None, false)?;
//! opt.minimize_with(&loss, &drop.take_updates())?; // the key advances too
//! # Ok::<(), morok::Error>(())
//! ```

mod attention;
mod batchnorm;
mod dropout;
mod groupnorm;

pub use crate::dsl::layers::{
    Conv1d, Conv2d, Embedding, LayerNorm, Linear, Param, SelfAttention, Sequential,
};
pub use crate::dsl::rt::{save_safetensors, ParamFile};
pub use attention::MultiheadAttention;
pub use batchnorm::BatchNorm2d;
pub use dropout::Dropout;
pub use groupnorm::GroupNorm;

use crate::Tensor;
use std::sync::{Mutex, MutexGuard};

/// What the layers have in common: named parameters and state, a
/// training mode, and state updates for the next step.
pub trait Module {
    /// Appends the trainable parameters, named `prefix.name` as in
    /// PyTorch's `state_dict`.
    fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>);

    /// Appends everything a saved model holds: the parameters and the
    /// buffers (running statistics), named as in PyTorch's `state_dict`.
    fn state(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        self.parameters(prefix, out);
    }

    /// Training mode (`true`, batch statistics and dropout) or evaluation
    /// mode (`false`, the default). Layers without a mode ignore it.
    fn train(&mut self, on: bool) {
        let _ = on;
    }

    /// The state updates the training-mode forward passes since the last
    /// call asked for, as `(target, new value)` pairs; taking them clears
    /// the list.
    fn take_updates(&self) -> Vec<(Tensor, Tensor)> {
        Vec::new()
    }
}

macro_rules! stateless_modules {
    ($($layer:ty),*) => {$(
        impl Module for $layer {
            fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
                <$layer>::parameters(self, prefix, out)
            }
        }
    )*};
}

stateless_modules!(Linear, Conv1d, Conv2d, LayerNorm, Embedding, Param);

/// `prefix.suffix`.
fn named(prefix: &str, suffix: &str) -> String {
    format!("{prefix}.{suffix}")
}

/// The pending state updates of a layer (see [`Module::take_updates`]).
#[derive(Debug, Default)]
struct Pending(Mutex<Vec<(Tensor, Tensor)>>);

/// A copy of a layer starts with no pending updates (they belong to the
/// original's step).
impl Clone for Pending {
    fn clone(&self) -> Self {
        Pending::default()
    }
}

impl Pending {
    fn list(&self) -> MutexGuard<'_, Vec<(Tensor, Tensor)>> {
        // Each critical section is one push or one take: a poisoned lock
        // holds a whole list.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `(target, value)`, replacing an earlier update of `target`
    /// (the last forward pass wins, as when PyTorch runs it eagerly).
    fn record(&self, target: &Tensor, value: Tensor) {
        let mut list = self.list();
        list.retain(|(t, _)| t.realized_buffer() != target.realized_buffer());
        list.push((target.clone(), value));
    }

    fn take(&self) -> Vec<(Tensor, Tensor)> {
        std::mem::take(&mut *self.list())
    }
}
