//! Batch normalization over the channels of NCHW images, PyTorch's
//! `nn.BatchNorm2d`.

use super::{named, Module, Pending};
use crate::{DType, Error, Result, Tensor};

/// `(x - mean) / sqrt(var + eps) * weight + bias` per channel (axis 1 of
/// `[N, C, H, W]`). In training mode the mean and the biased variance are
/// the batch's, and the running statistics move toward the batch's
/// (`running = (1 - momentum) running + momentum batch`, with the
/// unbiased variance); in evaluation mode the running statistics are used.
#[derive(Clone, Debug)]
pub struct BatchNorm2d {
    /// `[C]`, ones.
    pub weight: Tensor,
    /// `[C]`, zeros.
    pub bias: Tensor,
    /// `[C]`, zeros.
    pub running_mean: Tensor,
    /// `[C]`, ones.
    pub running_var: Tensor,
    /// The running statistics' update factor (PyTorch's default 0.1).
    pub momentum: f64,
    /// Added to the variance (default 1e-5).
    pub eps: f64,
    training: bool,
    pending: Pending,
}

impl BatchNorm2d {
    /// A layer for `channels` channels, PyTorch's initial values, in
    /// evaluation mode.
    #[track_caller]
    pub fn new(channels: usize) -> Result<BatchNorm2d> {
        let ones = || {
            Tensor::ones(&[channels], DType::F32)
                .contiguous()?
                .realize()
        };
        let zeros = || {
            Tensor::zeros(&[channels], DType::F32)
                .contiguous()?
                .realize()
        };
        Ok(BatchNorm2d {
            weight: ones()?,
            bias: zeros()?,
            running_mean: zeros()?,
            running_var: ones()?,
            momentum: 0.1,
            eps: 1e-5,
            training: false,
            pending: Pending::default(),
        })
    }

    /// Normalizes `x` (`[N, C, H, W]`, f32).
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let c = self.weight.numel();
        let shape = x.shape();
        if shape.len() != 4 || shape[1] != c {
            return Err(Error::argument(
                "batch_norm2d",
                format!("input {shape:?} is not [N, {c}, H, W]"),
            ));
        }
        let per_channel = [1, c as isize, 1, 1];
        let (mean, var) = if self.training {
            let mean = x.mean(Some(&[0, 2, 3]), true)?;
            let var = x.var(Some(&[0, 2, 3]), 0, true)?;
            let count = (shape[0] * shape[2] * shape[3]) as f64;
            let unbiased = var.mul(count / (count - 1.0).max(1.0))?;
            let m = self.momentum;
            let new_mean = self
                .running_mean
                .mul(1.0 - m)?
                .add(&mean.reshape(&[c as isize])?.mul(m)?)?;
            let new_var = self
                .running_var
                .mul(1.0 - m)?
                .add(&unbiased.reshape(&[c as isize])?.mul(m)?)?;
            self.pending.record(&self.running_mean, new_mean);
            self.pending.record(&self.running_var, new_var);
            (mean, var)
        } else {
            (
                self.running_mean.reshape(&per_channel)?,
                self.running_var.reshape(&per_channel)?,
            )
        };
        x.sub(&mean)?
            .mul(&var.add(self.eps)?.rsqrt()?)?
            .mul(&self.weight.reshape(&per_channel)?)?
            .add(&self.bias.reshape(&per_channel)?)
    }
}

impl Module for BatchNorm2d {
    fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((named(prefix, "weight"), self.weight.clone()));
        out.push((named(prefix, "bias"), self.bias.clone()));
    }

    fn state(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        self.parameters(prefix, out);
        out.push((named(prefix, "running_mean"), self.running_mean.clone()));
        out.push((named(prefix, "running_var"), self.running_var.clone()));
    }

    fn train(&mut self, on: bool) {
        self.training = on;
    }

    fn take_updates(&self) -> Vec<(Tensor, Tensor)> {
        self.pending.take()
    }
}
