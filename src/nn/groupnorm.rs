//! Group normalization, PyTorch's `nn.GroupNorm`.

use super::{named, Module};
use crate::{DType, Error, Result, Tensor};

/// Normalizes each of `groups` groups of channels (axis 1 of `[N, C,
/// ...]`) over its channels and the remaining axes, then scales and
/// shifts per channel. Has no training mode: the statistics are always
/// the input's.
#[derive(Clone, Debug)]
pub struct GroupNorm {
    /// `[C]`, ones.
    pub weight: Tensor,
    /// `[C]`, zeros.
    pub bias: Tensor,
    /// Added to the variance (default 1e-5).
    pub eps: f64,
    groups: usize,
}

impl GroupNorm {
    /// `groups` groups of `channels` channels (a multiple of `groups`),
    /// PyTorch's initial values.
    #[track_caller]
    pub fn new(groups: usize, channels: usize) -> Result<GroupNorm> {
        if groups == 0 || !channels.is_multiple_of(groups) {
            return Err(Error::argument(
                "group_norm",
                format!("{channels} channels do not split into {groups} groups"),
            ));
        }
        Ok(GroupNorm {
            weight: Tensor::ones(&[channels], DType::F32)
                .contiguous()?
                .realize()?,
            bias: Tensor::zeros(&[channels], DType::F32)
                .contiguous()?
                .realize()?,
            eps: 1e-5,
            groups,
        })
    }

    /// The number of groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Normalizes `x` (`[N, C, ...]`, f32).
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let c = self.weight.numel();
        let shape = x.shape().to_vec();
        if shape.len() < 2 || shape[1] != c {
            return Err(Error::argument(
                "group_norm",
                format!("input {shape:?} is not [N, {c}, ...]"),
            ));
        }
        let grouped = [shape[0] as isize, self.groups as isize, -1];
        let normed = x
            .reshape(&grouped)?
            .layernorm(&[-1], None, None, self.eps)?
            .reshape(&shape.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
        let mut per_channel = vec![1isize; shape.len()];
        per_channel[1] = c as isize;
        normed
            .mul(&self.weight.reshape(&per_channel)?)?
            .add(&self.bias.reshape(&per_channel)?)
    }
}

impl Module for GroupNorm {
    fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((named(prefix, "weight"), self.weight.clone()));
        out.push((named(prefix, "bias"), self.bias.clone()));
    }
}
