//! Weight initializers of `torch.nn.init` (seeded): Kaiming (He) and
//! Xavier (Glorot), uniform and normal, with PyTorch's fan rules: for a
//! weight `[out, in, k...]`, `fan_in = in · prod(k)` and `fan_out = out ·
//! prod(k)`. Kaiming's `mode` and `nonlinearity` are [`KaimingOptions`].

use super::Tensor;
use crate::error::{Error, Result};
use crate::DType;
use morok_core::shape::ShapeError;

/// `(fan_in, fan_out)` of a weight shape (at least 2 axes) of a float
/// `dtype`.
#[track_caller]
fn fans(op: &str, shape: &[usize], dtype: DType) -> Result<(f64, f64)> {
    let t = super::creation::element_type(op, dtype)?;
    if !t.is_float() {
        return Err(Error::dtype(op, format!("{t} is not a float type")));
    }
    if shape.len() < 2 {
        return Err(Error::shape(ShapeError::new(
            op,
            &[shape],
            "fans need a weight with at least 2 axes",
        )));
    }
    super::checked_numel(op, shape)?;
    let field: usize = shape[2..].iter().product();
    let (fan_in, fan_out) = (shape[1] * field, shape[0] * field);
    if fan_in == 0 || fan_out == 0 {
        return Err(Error::shape(ShapeError::new(op, &[shape], "a fan is zero")));
    }
    Ok((fan_in as f64, fan_out as f64))
}

/// Which fan Kaiming initialization scales by (PyTorch's `mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FanMode {
    /// `"fan_in"`: preserves the forward pass's variance.
    #[default]
    FanIn,
    /// `"fan_out"`: preserves the backward pass's variance.
    FanOut,
}

/// The nonlinearity whose gain (`torch.nn.init.calculate_gain`) scales an
/// initializer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Nonlinearity {
    /// `"linear"` and the convolutions: gain 1.
    Linear,
    /// `"sigmoid"`: gain 1.
    Sigmoid,
    /// `"tanh"`: gain 5/3.
    Tanh,
    /// `"relu"`: gain sqrt(2).
    Relu,
    /// `"leaky_relu"` with negative slope `a`: gain sqrt(2 / (1 + a²)).
    LeakyRelu(f64),
    /// `"selu"`: gain 3/4.
    Selu,
}

impl Nonlinearity {
    /// PyTorch's `calculate_gain` for this nonlinearity.
    pub fn gain(self) -> f64 {
        match self {
            Nonlinearity::Linear | Nonlinearity::Sigmoid => 1.0,
            Nonlinearity::Tanh => 5.0 / 3.0,
            Nonlinearity::Relu => 2f64.sqrt(),
            Nonlinearity::LeakyRelu(a) => (2.0 / (1.0 + a * a)).sqrt(),
            Nonlinearity::Selu => 0.75,
        }
    }
}

/// Options of [`Tensor::kaiming_uniform_with`] and
/// [`Tensor::kaiming_normal_with`]; the default is PyTorch's (`fan_in`,
/// `leaky_relu` with `a = 0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KaimingOptions {
    /// The fan scaled by.
    pub mode: FanMode,
    /// The nonlinearity that follows the layer.
    pub nonlinearity: Nonlinearity,
}

impl Default for KaimingOptions {
    fn default() -> Self {
        KaimingOptions {
            mode: FanMode::FanIn,
            nonlinearity: Nonlinearity::LeakyRelu(0.0),
        }
    }
}

/// `gain / sqrt(fan)` of a Kaiming initializer (errors name `op`).
#[track_caller]
fn kaiming_std(op: &str, shape: &[usize], dtype: DType, opts: KaimingOptions) -> Result<f64> {
    let (fan_in, fan_out) = fans(op, shape, dtype)?;
    let fan = match opts.mode {
        FanMode::FanIn => fan_in,
        FanMode::FanOut => fan_out,
    };
    let gain = opts.nonlinearity.gain();
    if !gain.is_finite() {
        return Err(Error::argument(
            op,
            format!(
                "{:?} has no finite gain (weight {shape:?})",
                opts.nonlinearity
            ),
        ));
    }
    Ok(gain / fan.sqrt())
}

impl Tensor {
    /// `U(-bound, bound)` samples from `seed`.
    #[track_caller]
    fn uniform_between(shape: &[usize], dtype: DType, seed: u64, bound: f64) -> Result<Tensor> {
        let u = Tensor::rand_seeded(shape, dtype, seed);
        u.mul(2.0 * bound)?.sub(bound)
    }

    /// `kaiming_uniform_(a, mode="fan_in", nonlinearity="leaky_relu")`:
    /// [`Tensor::kaiming_uniform_with`] with a leaky-ReLU slope `a`.
    #[track_caller]
    pub fn kaiming_uniform(shape: &[usize], dtype: DType, a: f64, seed: u64) -> Result<Tensor> {
        let opts = KaimingOptions {
            nonlinearity: Nonlinearity::LeakyRelu(a),
            ..KaimingOptions::default()
        };
        Tensor::kaiming_uniform_with(shape, dtype, opts, seed)
    }

    /// `kaiming_normal_(a, mode="fan_in", nonlinearity="leaky_relu")`:
    /// [`Tensor::kaiming_normal_with`] with a leaky-ReLU slope `a`.
    #[track_caller]
    pub fn kaiming_normal(shape: &[usize], dtype: DType, a: f64, seed: u64) -> Result<Tensor> {
        let opts = KaimingOptions {
            nonlinearity: Nonlinearity::LeakyRelu(a),
            ..KaimingOptions::default()
        };
        Tensor::kaiming_normal_with(shape, dtype, opts, seed)
    }

    /// `kaiming_uniform_(mode, nonlinearity)`: `U(-b, b)` with `b = gain ·
    /// sqrt(3 / fan)`, the fan chosen by `opts.mode`.
    #[track_caller]
    pub fn kaiming_uniform_with(
        shape: &[usize],
        dtype: DType,
        opts: KaimingOptions,
        seed: u64,
    ) -> Result<Tensor> {
        let std = kaiming_std("kaiming_uniform", shape, dtype, opts)?;
        Tensor::uniform_between(shape, dtype, seed, 3f64.sqrt() * std)
    }

    /// `kaiming_normal_(mode, nonlinearity)`: `N(0, std²)` with `std =
    /// gain / sqrt(fan)`, the fan chosen by `opts.mode`.
    #[track_caller]
    pub fn kaiming_normal_with(
        shape: &[usize],
        dtype: DType,
        opts: KaimingOptions,
        seed: u64,
    ) -> Result<Tensor> {
        let std = kaiming_std("kaiming_normal", shape, dtype, opts)?;
        Tensor::randn_seeded(shape, dtype, seed).mul(std)
    }

    /// `xavier_uniform_(gain)`: `U(-b, b)` with `b = gain · sqrt(6 /
    /// (fan_in + fan_out))`.
    #[track_caller]
    pub fn xavier_uniform(shape: &[usize], dtype: DType, gain: f64, seed: u64) -> Result<Tensor> {
        let (fi, fo) = fans("xavier_uniform", shape, dtype)?;
        Tensor::uniform_between(shape, dtype, seed, gain * (6.0 / (fi + fo)).sqrt())
    }

    /// `xavier_normal_(gain)`: `N(0, std²)` with `std = gain · sqrt(2 /
    /// (fan_in + fan_out))`.
    #[track_caller]
    pub fn xavier_normal(shape: &[usize], dtype: DType, gain: f64, seed: u64) -> Result<Tensor> {
        let (fi, fo) = fans("xavier_normal", shape, dtype)?;
        Tensor::randn_seeded(shape, dtype, seed).mul(gain * (2.0 / (fi + fo)).sqrt())
    }
}
