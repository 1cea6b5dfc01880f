//! Morok: lazy tensors compiled to fused kernels.
//!
//! Build a computation with [`Tensor`] ops (nothing runs), then call
//! [`Tensor::realize`] (or read the data with [`Tensor::to_vec`] /
//! [`Tensor::to_ndarray`]) to compile and run it. The first realization of
//! a graph runs the rewrite pipeline and JIT-compiles its kernels with the
//! system C compiler; realizing a graph of the same structure again (new
//! data, same ops and shapes) reuses both.
//!
//! ```
//! use morok::Tensor;
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
//! let b = &a * 2.0 + 1.0;
//! assert_eq!(b.to_vec::<f32>()?, [3.0, 5.0, 7.0]);
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! # Shapes, axes and broadcasting
//!
//! Semantics follow NumPy and PyTorch: binary ops broadcast from the
//! right, negative axes count from the end, reductions take a list of
//! axes (`None` for all) and a `keepdim` flag, and `matmul` follows the
//! usual vector / matrix / batched rules.
//!
//! ```
//! use morok::Tensor;
//! let m = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3])?;
//! let row = Tensor::from_slice(&[10.0f32, 20.0, 30.0]);
//! let shifted = &m + &row; // [2, 3] + [3]
//! let sums = shifted.sum(Some(&[-1]), false)?;
//! assert_eq!(sums.to_vec::<f32>()?, [63.0, 72.0]);
//! let t = m.transpose(0, 1)?; // [3, 2]
//! assert_eq!(m.matmul(&t)?.shape(), [2, 2]);
//! assert_eq!(m.argmax(Some(1))?.to_vec::<i64>()?, [2, 2]);
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! # Errors
//!
//! Every fallible method returns [`Result`]. Operators (`+`, `*`, `-`, ...)
//! cannot return one, so a shape or dtype mismatch makes a tensor that
//! carries the error; the next fallible call returns it. An [`Error`]
//! names the op, the shapes or dtypes involved and the source location of
//! the call that went wrong.
//!
//! ```
//! use morok::Tensor;
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
//! let b = Tensor::from_slice(&[1.0f32, 2.0]);
//! let c = &a + &b; // no panic here
//! let err = c.realize().unwrap_err();
//! assert_eq!(err.op(), "add");
//! assert!(err.to_string().starts_with("add: [3] and [2]"));
//! ```
//!
//! # Operations by category
//!
//! - **Creation**: `from_vec`, `from_slice`, `full`, `zeros`, `ones`,
//!   `empty`, `arange`, `arange_dtype`, `linspace`, `linspace_dtype`,
//!   `eye`, `eye_rect`, `rand_seeded`, `randn_seeded`; initializers
//!   `kaiming_uniform`, `kaiming_normal` (and `_with`, [`KaimingOptions`]:
//!   [`FanMode`], [`Nonlinearity`] gains), `xavier_uniform`,
//!   `xavier_normal`.
//! - **Elementwise**: arithmetic and comparisons with broadcasting,
//!   `exp`, `log`, `sqrt`, `sin`, `tanh`, `sinh`, `cosh`, `asinh`, `acosh`,
//!   `atanh`, `asin`, `acos`, `atan`, `atan2`, `log10`, `log1p`, `expm1`,
//!   `copysign`, `fmod`, `remainder`, `floor_div`, `div_mode`
//!   ([`RoundingMode`]), `lerp`, `logaddexp`, `isclose`, `allclose`,
//!   `isnan`, `isinf`, `isposinf`, `isneginf`, `isfinite`, `bitwise_and`,
//!   `bitwise_or`, `bitwise_xor`, `bitwise_not`, `bitwise_left_shift`,
//!   `bitwise_right_shift`, `where_`, `clamp`, `cast`.
//! - **Reductions**: `sum`, `prod` (and `sum_dtype`, `prod_dtype`), `max`,
//!   `min`, `mean`, `var`, `std`, `argmax`, `argmin`, `any`, `all`,
//!   `logsumexp`, `cumsum`, `cumprod`, `cummax`, `cummin`,
//!   `logcumsumexp`; `sort`, `argsort`, `topk`.
//! - **Movement**: `reshape`, `permute`, `transpose`,
//!   `expand`, `pad`, `shrink`, `slice`, `flip`,
//!   `squeeze`, `unsqueeze`, `flatten`, `repeat`,
//!   `cat`, `stack`, `split`, `chunk`, `pad_mode`
//!   ([`PadMode`]: constant, reflect, replicate, circular).
//! - **Indexing**: `index` ([`Index`]: integers, slices, new axes,
//!   ellipsis, integer tensors, bool masks), `index_select`, `gather`,
//!   `scatter`, `scatter_add`, `scatter_reduce` ([`ScatterReduce`]),
//!   `masked_fill`, `masked_select`, `nonzero`, `one_hot`, `tril`, `triu`,
//!   `diag`, `diagonal`, `roll`, `meshgrid`, `repeat_interleave`,
//!   `repeat_interleave_counts`, `unfold`. An index held in a tensor is
//!   never used as an address: out of range it reads 0 and its writes are
//!   dropped. Ops whose output shape depends on the data (`nonzero`,
//!   `masked_select`, a bool mask in `index`, `repeat_interleave_counts`)
//!   realize that count (one kernel) when called; their values stay lazy.
//! - **Linear algebra and nn**: `matmul`, `dot`, `linear`, `einsum`,
//!   `scaled_dot_product_attention` ([`AttentionOptions`]: mask, causal,
//!   grouped-query heads, seeded dropout), `conv1d`, `conv2d`, `conv3d`
//!   ([`Conv1dOptions`], [`ConvOptions`], [`Conv3dOptions`]),
//!   `conv_transpose1d`, `conv_transpose2d`, `conv_transpose3d`
//!   ([`ConvTransposeOptions`], [`ConvTranspose3dOptions`]),
//!   `max_pool1d`/`2d`/`3d` (and `_with_indices`), `avg_pool1d`/`2d`/`3d`,
//!   `max_unpool1d`/`2d`/`3d` ([`PoolOptions`], [`Pool3dOptions`]: stride,
//!   padding, dilation, `ceil_mode`, `count_include_pad`,
//!   `divisor_override`), `interpolate` and `interpolate_scale`
//!   ([`InterpolateMode`]), `layernorm`, `normalize`, `softmax`,
//!   `log_softmax`, `softmin`.
//! - **Activations**: `relu`, `leaky_relu`, `sigmoid`, `gelu`,
//!   `gelu_tanh`, `silu`, `elu`, `selu`, `celu`, `softplus`, `softsign`,
//!   `hardsigmoid`, `hardswish`, `hardtanh`, `relu6`, `mish`,
//!   `logsigmoid`, `quick_gelu`.
//! - **Losses** ([`Reduction`]): `mse_loss`, `l1_loss`, `smooth_l1_loss`,
//!   `binary_cross_entropy`, `binary_cross_entropy_with_logits`,
//!   `nll_loss` and `cross_entropy_with` ([`ClassLossOptions`]),
//!   `cross_entropy`.
//!
//! Indexing follows PyTorch, `t[-1, ::2]` and `t[:, idx]`:
//!
//! ```
//! use morok::{Index, Slice, Tensor};
//! let t = Tensor::from_vec((0..12).map(|v| v as f32).collect(), &[3, 4])?;
//! let row = t.index(&[Index::Int(-1), Index::Slice(Slice::all().step(2))])?;
//! assert_eq!(row.to_vec::<f32>()?, [8.0, 10.0]);
//! let idx = Tensor::from_slice(&[3i64, 0]);
//! let cols = t.index(&[Index::Slice(Slice::all()), Index::Tensor(idx.clone())])?;
//! assert_eq!(cols.to_vec::<f32>()?, [3.0, 0.0, 7.0, 4.0, 11.0, 8.0]);
//! let picked = t.gather(1, &Tensor::from_vec(vec![1i64, 2, 3], &[3, 1])?)?;
//! assert_eq!(picked.to_vec::<f32>()?, [1.0, 6.0, 11.0]);
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! `einsum` takes PyTorch's equations, with ellipsis and traces:
//!
//! ```
//! use morok::Tensor;
//! let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = Tensor::from_vec(vec![0.0f32, 1.0, 1.0, 0.0], &[2, 2])?;
//! let ab = Tensor::einsum("ij,jk->ik", &[&a, &b])?;
//! assert_eq!(ab.to_vec::<f32>()?, [2.0, 1.0, 4.0, 3.0]);
//! assert_eq!(Tensor::einsum("ii", &[&a])?.to_vec::<f32>()?, [5.0]);
//! assert!(Tensor::einsum("ij,jk->iq", &[&a, &b]).is_err());
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! Attention with a causal mask and grouped-query heads:
//!
//! ```
//! use morok::{AttentionOptions, Tensor};
//! let q = Tensor::randn_seeded(&[1, 4, 3, 8], morok::DType::F32, 1); // 4 query heads
//! let kv = Tensor::randn_seeded(&[1, 2, 3, 8], morok::DType::F32, 2); // 2 key/value heads
//! let opts = AttentionOptions { is_causal: true, enable_gqa: true, ..Default::default() };
//! let out = q.scaled_dot_product_attention(&kv, &kv, &opts)?;
//! assert_eq!(out.shape(), [1, 4, 3, 8]);
//! // The first query sees only the first key: its output is that value.
//! let first = out.index(&[morok::Index::Int(0), morok::Index::Int(0), morok::Index::Int(0)])?;
//! let v0 = kv.index(&[morok::Index::Int(0), morok::Index::Int(0), morok::Index::Int(0)])?;
//! assert!(first.allclose(&v0, morok::IsCloseOptions { atol: 1e-6, ..Default::default() })?);
//! # Ok::<(), morok::Error>(())
//! ```
//!
//! # Looking inside
//!
//! [`Tensor::uop`] is the graph (print it with `tree()`), and
//! [`Tensor::kernels`] lists the kernels a realization ran with their
//! generated code. The environment variable `MOROK_DEBUG` prints kernels
//! and their times (`1`), the schedule (`2`), the generated code (`3`) or
//! the IR after every stage (`ir`); `MOROK_NOOPT=1` turns optimizations
//! off and `MOROK_BEAM=N` tunes every kernel by a beam search of width
//! `N` (results cached on disk; see [`set_opt_mode`]). `docs/ARCHITECTURE.md` in the repository describes the pipeline.
//!
//! ```
//! use morok::Tensor;
//! let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0]);
//! let y = (&x * &x).relu()?.realize()?;
//! let kernels = y.kernels();
//! assert_eq!(kernels.len(), 1); // multiply and relu fuse
//! assert!(kernels[0].code.contains(&kernels[0].name));
//! println!("{}", y.uop().tree());
//! # Ok::<(), morok::Error>(())
//! ```

#![warn(missing_docs)]

pub use morok_backends as backends;
pub use morok_core as core;

pub mod aot;
mod call_cache;
mod config;
mod debug_build;
pub mod device;
pub mod dsl;
mod error;
mod executor;
mod ir_dump;
mod kernel;
mod kernel_cache;
pub mod nn;
pub mod optim;
mod realize;
pub mod storage;
mod tensor;

pub use call_cache::CallCache;
pub use error::{Error, Result};
pub use morok_macros::kernel;

/// Counters that show what the runtime did (for tests and benchmarks).
pub mod stats {
    pub use crate::call_cache::call_cache_warm_calls;
    pub use crate::dsl::plan::dsl_warm_calls;
    pub use crate::executor::kernel_launches;
    pub use crate::kernel_cache::{kernel_cache_len, kernel_compiles};
    pub use morok_backends::beam::beam_cache_hits;
    pub use morok_backends::beam::{
        candidates_timed as beam_candidates_timed, searches_run as beam_searches,
    };
    pub use morok_backends::cpu::c::aot::{
        hits as aot_kernel_hits, jit_builds as jit_kernel_builds,
    };
    pub use morok_backends::cpu::pooled_bytes as cpu_pooled_bytes;
    pub use morok_core::pipeline_runs;
    pub use morok_core::schedule_cache_len;
}

pub use kernel_cache::{kernel_cache_limit, set_kernel_cache_limit, DEFAULT_KERNEL_CACHE_LIMIT};
/// Stage timings of the compile path (`morok::profile::set_enabled`, then
/// `snapshot`): where a first call's time goes.
pub use morok_core::profile;
pub use morok_core::{BeamConfig, OptMode};

/// Chooses how kernels compiled from now on in this process are
/// optimized, overriding `MOROK_NOOPT` / `MOROK_BEAM`; `None` goes back to
/// the environment's choice. Kernels already compiled keep their code
/// (the kernel cache keys kernels by mode too).
///
/// ```
/// use morok::{BeamConfig, OptMode, Tensor};
/// morok::set_opt_mode(Some(OptMode::None));
/// let x = Tensor::from_slice(&[1.0f32, 2.0]);
/// let y = (&x + &x).realize()?;
/// assert_eq!(y.to_vec::<f32>()?, [2.0, 4.0]);
/// let _beam = OptMode::Beam(BeamConfig::new(2)); // a beam search of width 2
/// morok::set_opt_mode(None);
/// # Ok::<(), morok::Error>(())
/// ```
pub fn set_opt_mode(mode: Option<OptMode>) {
    config::set_opt_mode(mode);
}
pub use device::Device;
pub use kernel::KernelInfo;
pub(crate) use kernel::KernelRun;
pub use morok_core::dtype::Element;
pub use morok_core::{DType, ScalarType};
pub use tensor::{
    AttentionOptions, ClassLossOptions, Conv1dOptions, Conv3dOptions, ConvOptions,
    ConvTranspose3dOptions, ConvTransposeOptions, FanMode, Index, InterpolateMode, IntoOperand,
    IsCloseOptions, KaimingOptions, MeshIndexing, Nonlinearity, Operand, PadMode, Pads,
    Pool3dOptions, PoolOptions, Reduction, RoundingMode, ScalarPow, ScatterReduce, Slice, Tensor,
};
