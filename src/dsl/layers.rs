//! The layers a `model!` struct holds, with PyTorch's parameter names,
//! shapes and default initialization: `Linear`, `Conv1d`, `Conv2d`,
//! `LayerNorm`, `Embedding` and `Param` here, the others in `blocks.rs` (and the
//! stateful ones in [`crate::nn`]).

mod blocks;

use super::rt::{layer_seed, ParamFile};
use crate::nn::{BatchNorm2d, Dropout, GroupNorm};
use crate::{Conv1dOptions, ConvOptions, DType, Pads, Result, Tensor};

pub use blocks::{Activation, Block, BlockConfig, SelfAttention, Sequential};

/// Uniform samples in `[-bound, bound)`, realized.
#[track_caller]
fn uniform(shape: &[usize], bound: f64, seed: u64) -> Result<Tensor> {
    Tensor::rand_seeded(shape, DType::F32, seed)
        .mul(2.0 * bound)?
        .sub(bound)?
        .realize()
}

/// `prefix.suffix`.
fn named(prefix: &str, suffix: &str) -> String {
    format!("{prefix}.{suffix}")
}

/// A convolution's weight `[out, in, kernel..]` and bias `[out]`, uniform
/// in `±1/sqrt(in·∏kernel)` (PyTorch's default).
#[track_caller]
fn conv_init(inp: usize, out: usize, kernel: &[usize], seed: u64) -> Result<(Tensor, Tensor)> {
    let fan_in = kernel.iter().product::<usize>() * inp;
    let bound = 1.0 / (fan_in.max(1) as f64).sqrt();
    let mut shape = vec![out, inp];
    shape.extend(kernel);
    Ok((
        uniform(&shape, bound, layer_seed(seed, 0))?,
        uniform(&[out], bound, layer_seed(seed, 1))?,
    ))
}

/// A convolution's `prefix.weight` `[out, in, kernel..]` and
/// `prefix.bias` `[out]`.
#[track_caller]
fn conv_load(
    file: &ParamFile,
    prefix: &str,
    inp: usize,
    out: usize,
    kernel: &[usize],
) -> Result<(Tensor, Tensor)> {
    let mut shape = vec![out, inp];
    shape.extend(kernel);
    Ok((
        file.take(&named(prefix, "weight"), &shape)?,
        file.take(&named(prefix, "bias"), &[out])?,
    ))
}

/// `x @ weight.T + bias`, PyTorch's `nn.Linear`.
#[derive(Clone, Debug)]
pub struct Linear {
    /// `[out, in]`.
    pub weight: Tensor,
    /// `[out]`, when the layer has a bias.
    pub bias: Option<Tensor>,
}

impl Linear {
    /// Weight and bias uniform in `±1/sqrt(in)` (PyTorch's default).
    #[track_caller]
    pub fn init(inp: usize, out: usize, bias: bool, seed: u64) -> Result<Linear> {
        let bound = 1.0 / (inp.max(1) as f64).sqrt();
        Ok(Linear {
            weight: uniform(&[out, inp], bound, layer_seed(seed, 0))?,
            bias: if bias {
                Some(uniform(&[out], bound, layer_seed(seed, 1))?)
            } else {
                None
            },
        })
    }

    /// Reads `prefix.weight` and `prefix.bias`.
    #[track_caller]
    pub fn load(
        file: &ParamFile,
        prefix: &str,
        inp: usize,
        out: usize,
        bias: bool,
    ) -> Result<Linear> {
        Ok(Linear {
            weight: file.take(&named(prefix, "weight"), &[out, inp])?,
            bias: if bias {
                Some(file.take(&named(prefix, "bias"), &[out])?)
            } else {
                None
            },
        })
    }

    /// Appends the parameters under `prefix`.
    pub fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((named(prefix, "weight"), self.weight.clone()));
        if let Some(b) = &self.bias {
            out.push((named(prefix, "bias"), b.clone()));
        }
    }

    /// Applies the layer.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.linear(&self.weight, self.bias.as_ref())
    }
}

/// Declares a convolution layer with a square kernel over `$rank` axes:
/// its weight `[out, in, k..]`, bias `[out]` and options of type `$opts`
/// (made from the stride and padding by `$options`), PyTorch's
/// initialization, `load`, `parameters`, and a `forward` calling the
/// `Tensor` method `$forward`.
macro_rules! conv_layer {
    ($(#[$doc:meta])* $name:ident($rank:literal, $opts:ty, $forward:ident), $options:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            /// `[out, in, k..]`.
            pub weight: Tensor,
            /// `[out]`.
            pub bias: Tensor,
            /// Stride and padding.
            pub options: $opts,
        }

        impl $name {
            /// Weight and bias uniform in `±1/sqrt(in·k^rank)` (PyTorch's
            /// default).
            #[track_caller]
            pub fn init(
                inp: usize,
                out: usize,
                k: usize,
                stride: usize,
                padding: usize,
                seed: u64,
            ) -> Result<$name> {
                let (weight, bias) = conv_init(inp, out, &[k; $rank], seed)?;
                let options: fn(usize, usize) -> $opts = $options;
                Ok($name {
                    weight,
                    bias,
                    options: options(stride, padding),
                })
            }

            /// Reads `prefix.weight` and `prefix.bias`.
            #[track_caller]
            pub fn load(
                file: &ParamFile,
                prefix: &str,
                inp: usize,
                out: usize,
                k: usize,
                stride: usize,
                padding: usize,
            ) -> Result<$name> {
                let (weight, bias) = conv_load(file, prefix, inp, out, &[k; $rank])?;
                let options: fn(usize, usize) -> $opts = $options;
                Ok($name {
                    weight,
                    bias,
                    options: options(stride, padding),
                })
            }

            /// Appends the parameters under `prefix`.
            pub fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
                out.push((named(prefix, "weight"), self.weight.clone()));
                out.push((named(prefix, "bias"), self.bias.clone()));
            }

            /// Applies the layer.
            #[track_caller]
            pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
                x.$forward(&self.weight, Some(&self.bias), self.options)
            }
        }
    };
}

conv_layer!(
    /// A 1-D convolution, PyTorch's `nn.Conv1d`.
    Conv1d(1, Conv1dOptions, conv1d),
    |stride, padding| Conv1dOptions {
        stride,
        padding: Pads::from(padding),
        ..Conv1dOptions::default()
    }
);

conv_layer!(
    /// A 2-D convolution with a square kernel, PyTorch's `nn.Conv2d`.
    Conv2d(2, ConvOptions, conv2d),
    |stride, padding| ConvOptions {
        stride: (stride, stride),
        padding: Pads::from(padding),
        ..ConvOptions::default()
    }
);

/// Layer normalization over the last axis, PyTorch's `nn.LayerNorm`.
#[derive(Clone, Debug)]
pub struct LayerNorm {
    /// `[n]`, initialized to ones.
    pub weight: Tensor,
    /// `[n]`, initialized to zeros.
    pub bias: Tensor,
}

impl LayerNorm {
    /// Ones and zeros (PyTorch's default); `seed` is unused.
    #[track_caller]
    pub fn init(n: usize, seed: u64) -> Result<LayerNorm> {
        let _ = seed;
        Ok(LayerNorm {
            weight: Tensor::ones(&[n], DType::F32).realize()?,
            bias: Tensor::zeros(&[n], DType::F32).realize()?,
        })
    }

    /// Reads `prefix.weight` and `prefix.bias`.
    #[track_caller]
    pub fn load(file: &ParamFile, prefix: &str, n: usize) -> Result<LayerNorm> {
        Ok(LayerNorm {
            weight: file.take(&named(prefix, "weight"), &[n])?,
            bias: file.take(&named(prefix, "bias"), &[n])?,
        })
    }

    /// Appends the parameters under `prefix`.
    pub fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((named(prefix, "weight"), self.weight.clone()));
        out.push((named(prefix, "bias"), self.bias.clone()));
    }

    /// Applies the layer (eps `1e-5`, as PyTorch).
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.layernorm(&[-1], Some(&self.weight), Some(&self.bias), 1e-5)
    }
}

/// A lookup table, PyTorch's `nn.Embedding`.
#[derive(Clone, Debug)]
pub struct Embedding {
    /// `[vocab, dim]`.
    pub weight: Tensor,
}

impl Embedding {
    /// Standard normal rows (PyTorch's default).
    #[track_caller]
    pub fn init(vocab: usize, dim: usize, seed: u64) -> Result<Embedding> {
        Ok(Embedding {
            weight: Tensor::randn_seeded(&[vocab, dim], DType::F32, layer_seed(seed, 0))
                .realize()?,
        })
    }

    /// Reads `prefix.weight`.
    #[track_caller]
    pub fn load(file: &ParamFile, prefix: &str, vocab: usize, dim: usize) -> Result<Embedding> {
        Ok(Embedding {
            weight: file.take(&named(prefix, "weight"), &[vocab, dim])?,
        })
    }

    /// Appends the parameters under `prefix`.
    pub fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((named(prefix, "weight"), self.weight.clone()));
    }

    /// The rows of `indices` (an integer tensor `[..]`, giving `[.., dim]`),
    /// as a one-hot product.
    #[track_caller]
    pub fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        let vocab = self.weight.shape().first().copied().unwrap_or(0);
        let ids = indices.cast(DType::I32)?.unsqueeze(-1)?;
        let rows = Tensor::arange(0i32, vocab as i32, 1)?;
        ids.eq(&rows)?.cast(DType::F32)?.matmul(&self.weight)
    }
}

/// A raw parameter used by name in a forward body.
#[derive(Clone, Debug)]
pub struct Param {
    /// The values, standard normal when fresh.
    pub value: Tensor,
}

impl Param {
    /// Standard normal values (like `torch.randn`).
    #[track_caller]
    pub fn init(shape: &[usize], seed: u64) -> Result<Param> {
        Ok(Param {
            value: Tensor::randn_seeded(shape, DType::F32, layer_seed(seed, 0)).realize()?,
        })
    }

    /// Reads the tensor named `prefix`.
    #[track_caller]
    pub fn load(file: &ParamFile, prefix: &str, shape: &[usize]) -> Result<Param> {
        Ok(Param {
            value: file.take(prefix, shape)?,
        })
    }

    /// Appends the parameter as `prefix`.
    pub fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        out.push((prefix.to_string(), self.value.clone()));
    }
}

/// A layer applied by a `model!` body (`fc1(x)`): what an embedded graph's
/// [`NodeOp::Layer`](super::graph::NodeOp::Layer) node calls.
pub trait Layer {
    /// The layer's output for `x` (its `forward`).
    fn apply(&self, x: &Tensor) -> Result<Tensor>;
}

macro_rules! layer_kinds {
    ($($kind:ident),*) => {$(
        impl Layer for $kind {
            #[track_caller]
            fn apply(&self, x: &Tensor) -> Result<Tensor> {
                $kind::forward(self, x)
            }
        }
    )*};
}

layer_kinds!(
    Linear,
    Conv1d,
    Conv2d,
    LayerNorm,
    Embedding,
    SelfAttention,
    BatchNorm2d,
    GroupNorm,
    Dropout,
    Sequential
);
