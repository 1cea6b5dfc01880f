//! Dropout with a seeded, step-advancing random key.

use super::{Module, Pending};
use crate::{DType, Error, Result, Tensor};

/// In training mode, zeroes each element with probability `p` and scales
/// the kept ones by `1 / (1 - p)`; in evaluation mode (the default), the
/// identity. The mask comes from [`Tensor::rand_keyed`] with a key held in
/// a buffer: each training-mode forward pass records the key's increment
/// ([`Module::take_updates`]), so consecutive steps draw new masks while
/// the step's graph stays the same. The same seed gives the same masks.
#[derive(Clone, Debug)]
pub struct Dropout {
    p: f64,
    key: Tensor,
    training: bool,
    pending: Pending,
}

impl Dropout {
    /// Dropout with probability `p` in `[0, 1]`, its masks drawn from
    /// `seed`.
    #[track_caller]
    pub fn new(p: f64, seed: u64) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::argument(
                "dropout",
                format!("p = {p} is outside [0, 1]"),
            ));
        }
        Ok(Dropout {
            p,
            key: Tensor::from_slice(&[seed]).realize()?,
            training: false,
            pending: Pending::default(),
        })
    }

    /// The drop probability.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// Applies the layer to a float tensor.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if !self.training || self.p == 0.0 {
            return Ok(x.clone());
        }
        if self.p == 1.0 {
            return x.mul(0.0f32);
        }
        let u = Tensor::rand_keyed(x.shape(), DType::F32, &self.key)?;
        self.pending.record(&self.key, self.key.add(1u64)?);
        let kept = x.mul(1.0 / (1.0 - self.p))?;
        u.ge(self.p)?.where_(&kept, 0.0f32)
    }
}

impl Module for Dropout {
    fn parameters(&self, _prefix: &str, _out: &mut Vec<(String, Tensor)>) {}

    fn train(&mut self, on: bool) {
        self.training = on;
    }

    fn take_updates(&self) -> Vec<(Tensor, Tensor)> {
        self.pending.take()
    }
}
