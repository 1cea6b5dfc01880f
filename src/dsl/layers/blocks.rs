//! The `model!` layers beyond the basic five: self-attention,
//! the stateful `nn` layers (`BatchNorm2d`, `GroupNorm`, `Dropout`) with
//! the `init`/`load` a `model!` struct calls, and `Sequential` blocks of
//! layers and activations.

use super::{named, Conv1d, Conv2d, Embedding, LayerNorm, Linear};
use crate::dsl::rt::{layer_seed, ParamFile};
use crate::nn::{BatchNorm2d, Dropout, GroupNorm, Module, MultiheadAttention};
use crate::{AttentionOptions, Result, Tensor};

/// Multi-head self-attention of a `[B, L, E]` input (queries, keys and
/// values all the input), optionally causal: the `model!` layer
/// `MultiheadAttention(E, heads = H)` over [`MultiheadAttention`].
#[derive(Clone, Debug)]
pub struct SelfAttention {
    /// The projections and heads.
    pub attention: MultiheadAttention,
    /// Whether position `i` attends to positions `0..=i` only.
    pub causal: bool,
}

impl SelfAttention {
    /// PyTorch's initialization, from `seed`.
    #[track_caller]
    pub fn init(embed: usize, heads: usize, causal: bool, seed: u64) -> Result<SelfAttention> {
        Ok(SelfAttention {
            attention: MultiheadAttention::new(embed, heads, seed)?,
            causal,
        })
    }

    /// Reads `prefix.in_proj_weight`, `prefix.in_proj_bias` and
    /// `prefix.out_proj.{weight,bias}`.
    #[track_caller]
    pub fn load(
        file: &ParamFile,
        prefix: &str,
        embed: usize,
        heads: usize,
        causal: bool,
    ) -> Result<SelfAttention> {
        let mut attention = MultiheadAttention::new(embed, heads, 0)?;
        attention.in_proj_weight =
            file.take(&named(prefix, "in_proj_weight"), &[3 * embed, embed])?;
        attention.in_proj_bias = file.take(&named(prefix, "in_proj_bias"), &[3 * embed])?;
        attention.out_proj = Linear::load(file, &named(prefix, "out_proj"), embed, embed, true)?;
        Ok(SelfAttention { attention, causal })
    }

    /// Applies the layer.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let opts = AttentionOptions {
            is_causal: self.causal,
            ..AttentionOptions::default()
        };
        self.attention.forward(x, x, x, &opts)
    }
}

impl Module for SelfAttention {
    fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        self.attention.parameters(prefix, out);
    }
}

impl BatchNorm2d {
    /// A `model!` field's fresh layer (`seed` is unused: PyTorch's initial
    /// values are constants).
    #[track_caller]
    pub fn init(channels: usize, seed: u64) -> Result<BatchNorm2d> {
        let _ = seed;
        BatchNorm2d::new(channels)
    }

    /// Reads `prefix.weight`, `prefix.bias`, `prefix.running_mean` and
    /// `prefix.running_var`.
    #[track_caller]
    pub fn load(file: &ParamFile, prefix: &str, channels: usize) -> Result<BatchNorm2d> {
        let mut bn = BatchNorm2d::new(channels)?;
        bn.weight = file.take(&named(prefix, "weight"), &[channels])?;
        bn.bias = file.take(&named(prefix, "bias"), &[channels])?;
        bn.running_mean = file.take(&named(prefix, "running_mean"), &[channels])?;
        bn.running_var = file.take(&named(prefix, "running_var"), &[channels])?;
        Ok(bn)
    }
}

impl GroupNorm {
    /// A `model!` field's fresh layer (`seed` is unused).
    #[track_caller]
    pub fn init(groups: usize, channels: usize, seed: u64) -> Result<GroupNorm> {
        let _ = seed;
        GroupNorm::new(groups, channels)
    }

    /// Reads `prefix.weight` and `prefix.bias`.
    #[track_caller]
    pub fn load(
        file: &ParamFile,
        prefix: &str,
        groups: usize,
        channels: usize,
    ) -> Result<GroupNorm> {
        let mut gn = GroupNorm::new(groups, channels)?;
        gn.weight = file.take(&named(prefix, "weight"), &[channels])?;
        gn.bias = file.take(&named(prefix, "bias"), &[channels])?;
        Ok(gn)
    }
}

impl Dropout {
    /// A `model!` field's layer, its masks drawn from `seed`.
    #[track_caller]
    pub fn init(p: f64, seed: u64) -> Result<Dropout> {
        Dropout::new(p, seed)
    }

    /// A loaded model's layer (dropout has no parameters; its masks are
    /// drawn from a seed derived from `prefix`).
    #[track_caller]
    pub fn load(file: &ParamFile, prefix: &str, p: f64) -> Result<Dropout> {
        let _ = file;
        let seed = prefix
            .bytes()
            .fold(0u64, |h, b| layer_seed(h, u64::from(b)));
        Dropout::new(p, seed)
    }
}

/// An activation between the layers of a [`Sequential`] block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `relu`.
    Relu,
    /// `gelu` (the error-function form).
    Gelu,
    /// `tanh`.
    Tanh,
    /// `sigmoid`.
    Sigmoid,
    /// `silu`.
    Silu,
}

/// How a [`Sequential`] block's entry is made: the `model!` declaration
/// of one layer.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockConfig {
    /// `Linear(inp -> out, bias = ..)`.
    Linear(usize, usize, bool),
    /// `Conv1d(inp -> out, kernel, stride, padding)`.
    Conv1d(usize, usize, usize, usize, usize),
    /// `Conv2d(inp -> out, kernel, stride, padding)`.
    Conv2d(usize, usize, usize, usize, usize),
    /// `LayerNorm(n)`.
    LayerNorm(usize),
    /// `Embedding(vocab -> dim)`.
    Embedding(usize, usize),
    /// `BatchNorm2d(channels)`.
    BatchNorm2d(usize),
    /// `GroupNorm(groups, channels)`.
    GroupNorm(usize, usize),
    /// `Dropout(p)`.
    Dropout(f64),
    /// `MultiheadAttention(embed, heads, causal)`.
    SelfAttention(usize, usize, bool),
    /// An activation.
    Activation(Activation),
    /// A nested block.
    Sequential(Vec<BlockConfig>),
}

/// One entry of a [`Sequential`] block.
#[derive(Clone, Debug)]
pub enum Block {
    /// A linear layer.
    Linear(Linear),
    /// A 1-D convolution.
    Conv1d(Conv1d),
    /// A 2-D convolution.
    Conv2d(Conv2d),
    /// Layer normalization.
    LayerNorm(LayerNorm),
    /// An embedding.
    Embedding(Embedding),
    /// Batch normalization.
    BatchNorm2d(BatchNorm2d),
    /// Group normalization.
    GroupNorm(GroupNorm),
    /// Dropout.
    Dropout(Dropout),
    /// Self-attention.
    SelfAttention(SelfAttention),
    /// An activation (no parameters).
    Activation(Activation),
    /// A nested block.
    Sequential(Sequential),
}

/// Layers applied one after the other, PyTorch's `nn.Sequential`: entry
/// `i`'s parameters are named `prefix.i.name`.
#[derive(Clone, Debug)]
pub struct Sequential {
    /// The entries, in order.
    pub blocks: Vec<Block>,
}

/// `Some(the layer)` of a [`Block`] taken by `&` or `&mut`, `None` for an
/// activation.
macro_rules! as_module {
    ($block:expr, $($by:tt)+) => {
        match $block {
            Block::Linear(l) => Some($($by)+ *l),
            Block::Conv1d(l) => Some($($by)+ *l),
            Block::Conv2d(l) => Some($($by)+ *l),
            Block::LayerNorm(l) => Some($($by)+ *l),
            Block::Embedding(l) => Some($($by)+ *l),
            Block::BatchNorm2d(l) => Some($($by)+ *l),
            Block::GroupNorm(l) => Some($($by)+ *l),
            Block::Dropout(l) => Some($($by)+ *l),
            Block::SelfAttention(l) => Some($($by)+ *l),
            Block::Sequential(l) => Some($($by)+ *l),
            Block::Activation(_) => None,
        }
    };
}

impl Block {
    /// A fresh entry of `config`.
    #[track_caller]
    fn init(config: &BlockConfig, seed: u64) -> Result<Block> {
        use BlockConfig as C;
        Ok(match config {
            C::Linear(i, o, b) => Block::Linear(Linear::init(*i, *o, *b, seed)?),
            C::Conv1d(i, o, k, s, p) => Block::Conv1d(Conv1d::init(*i, *o, *k, *s, *p, seed)?),
            C::Conv2d(i, o, k, s, p) => Block::Conv2d(Conv2d::init(*i, *o, *k, *s, *p, seed)?),
            C::LayerNorm(n) => Block::LayerNorm(LayerNorm::init(*n, seed)?),
            C::Embedding(v, d) => Block::Embedding(Embedding::init(*v, *d, seed)?),
            C::BatchNorm2d(c) => Block::BatchNorm2d(BatchNorm2d::init(*c, seed)?),
            C::GroupNorm(g, c) => Block::GroupNorm(GroupNorm::init(*g, *c, seed)?),
            C::Dropout(p) => Block::Dropout(Dropout::init(*p, seed)?),
            C::SelfAttention(e, h, c) => {
                Block::SelfAttention(SelfAttention::init(*e, *h, *c, seed)?)
            }
            C::Activation(a) => Block::Activation(*a),
            C::Sequential(list) => Block::Sequential(Sequential::init(list, seed)?),
        })
    }

    /// The entry of `config` read under `prefix`.
    #[track_caller]
    fn load(config: &BlockConfig, file: &ParamFile, prefix: &str) -> Result<Block> {
        use BlockConfig as C;
        Ok(match config {
            C::Linear(i, o, b) => Block::Linear(Linear::load(file, prefix, *i, *o, *b)?),
            C::Conv1d(i, o, k, s, p) => {
                Block::Conv1d(Conv1d::load(file, prefix, *i, *o, *k, *s, *p)?)
            }
            C::Conv2d(i, o, k, s, p) => {
                Block::Conv2d(Conv2d::load(file, prefix, *i, *o, *k, *s, *p)?)
            }
            C::LayerNorm(n) => Block::LayerNorm(LayerNorm::load(file, prefix, *n)?),
            C::Embedding(v, d) => Block::Embedding(Embedding::load(file, prefix, *v, *d)?),
            C::BatchNorm2d(c) => Block::BatchNorm2d(BatchNorm2d::load(file, prefix, *c)?),
            C::GroupNorm(g, c) => Block::GroupNorm(GroupNorm::load(file, prefix, *g, *c)?),
            C::Dropout(p) => Block::Dropout(Dropout::load(file, prefix, *p)?),
            C::SelfAttention(e, h, c) => {
                Block::SelfAttention(SelfAttention::load(file, prefix, *e, *h, *c)?)
            }
            C::Activation(a) => Block::Activation(*a),
            C::Sequential(list) => Block::Sequential(Sequential::load(file, prefix, list)?),
        })
    }

    /// The entry as a module (`None` for an activation).
    fn module(&self) -> Option<&dyn Module> {
        as_module!(self, &)
    }

    fn module_mut(&mut self) -> Option<&mut dyn Module> {
        as_module!(self, &mut)
    }

    /// Applies the entry.
    #[track_caller]
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Block::Linear(l) => l.forward(x),
            Block::Conv1d(l) => l.forward(x),
            Block::Conv2d(l) => l.forward(x),
            Block::LayerNorm(l) => l.forward(x),
            Block::Embedding(l) => l.forward(x),
            Block::BatchNorm2d(l) => l.forward(x),
            Block::GroupNorm(l) => l.forward(x),
            Block::Dropout(l) => l.forward(x),
            Block::SelfAttention(l) => l.forward(x),
            Block::Sequential(l) => l.forward(x),
            Block::Activation(Activation::Relu) => x.relu(),
            Block::Activation(Activation::Gelu) => x.gelu(),
            Block::Activation(Activation::Tanh) => x.tanh(),
            Block::Activation(Activation::Sigmoid) => x.sigmoid(),
            Block::Activation(Activation::Silu) => x.silu(),
        }
    }
}

impl Sequential {
    /// Fresh entries of `configs`, entry `i` from `layer_seed(seed, i)`.
    #[track_caller]
    pub fn init(configs: &[BlockConfig], seed: u64) -> Result<Sequential> {
        let blocks = configs
            .iter()
            .enumerate()
            .map(|(i, c)| Block::init(c, layer_seed(seed, i as u64)))
            .collect::<Result<_>>()?;
        Ok(Sequential { blocks })
    }

    /// The entries of `configs` read under `prefix.i`.
    #[track_caller]
    pub fn load(file: &ParamFile, prefix: &str, configs: &[BlockConfig]) -> Result<Sequential> {
        let blocks = configs
            .iter()
            .enumerate()
            .map(|(i, c)| Block::load(c, file, &named(prefix, &i.to_string())))
            .collect::<Result<_>>()?;
        Ok(Sequential { blocks })
    }

    /// Applies the entries in order.
    #[track_caller]
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = x.clone();
        for b in &self.blocks {
            y = b.forward(&y)?;
        }
        Ok(y)
    }
}

impl Module for Sequential {
    fn parameters(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        for (i, b) in self.blocks.iter().enumerate() {
            if let Some(m) = b.module() {
                m.parameters(&named(prefix, &i.to_string()), out);
            }
        }
    }

    fn state(&self, prefix: &str, out: &mut Vec<(String, Tensor)>) {
        for (i, b) in self.blocks.iter().enumerate() {
            if let Some(m) = b.module() {
                m.state(&named(prefix, &i.to_string()), out);
            }
        }
    }

    fn train(&mut self, on: bool) {
        for b in &mut self.blocks {
            if let Some(m) = b.module_mut() {
                m.train(on);
            }
        }
    }

    fn take_updates(&self) -> Vec<(Tensor, Tensor)> {
        self.blocks
            .iter()
            .filter_map(Block::module)
            .flat_map(|m| m.take_updates())
            .collect()
    }
}
