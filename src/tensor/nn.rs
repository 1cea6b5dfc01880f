//! Neural-network ops: activations, softmax, layer norm, convolution,
//! pooling and the cross-entropy loss.
//!
//! `conv2d` cuts the padded input into windows with the movement-only
//! `pool` view (`[N, C, OH, OW, KH, KW]`), lines the windows up with the
//! weights per group, multiplies and sums over `(C, KH, KW)`. `max_pool2d`
//! pads with the dtype's minimum and takes the window max; `avg_pool2d`
//! pads with zeros and takes the window mean (padding counts).
//! `cross_entropy` picks each row's log-probability with a one-hot mask
//! (labels compared with `arange`) and averages the negatives.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{broadcast_shapes, conv2d_shape, ShapeError};
use morok_core::uop::{Op, ReduceOp};
use morok_core::{ConstValue, ScalarType};

/// Options of [`Tensor::conv2d`] (PyTorch's defaults: stride 1, no
/// padding, no dilation, one group): the core shape rules' geometry.
pub use morok_core::shape::ConvGeometry as ConvOptions;

/// Options of [`Tensor::max_pool2d`] and [`Tensor::avg_pool2d`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// Window size, (height, width).
    pub kernel: (usize, usize),
    /// Step between windows, (height, width).
    pub stride: (usize, usize),
    /// Padding on both sides, (height, width).
    pub padding: (usize, usize),
    /// Distance between window taps, (height, width) (max pooling only in
    /// PyTorch; honored by both here).
    pub dilation: (usize, usize),
    /// `ceil_mode`: a last, partial window is kept where it starts inside
    /// the input or the left padding.
    pub ceil_mode: bool,
    /// `count_include_pad` (average pooling): the padding counts in the
    /// divisor (the extra cells `ceil_mode` adds never do).
    pub count_include_pad: bool,
}

impl PoolOptions {
    /// Windows of `kernel` with a stride equal to the kernel, no padding.
    pub const fn new(kernel: (usize, usize)) -> PoolOptions {
        PoolOptions {
            kernel,
            stride: kernel,
            padding: (0, 0),
            dilation: (1, 1),
            ceil_mode: false,
            count_include_pad: true,
        }
    }

    /// The same options with another dilation.
    pub const fn dilation(self, dilation: (usize, usize)) -> PoolOptions {
        PoolOptions { dilation, ..self }
    }

    /// The same options with `ceil_mode` set.
    pub const fn ceil_mode(self, ceil_mode: bool) -> PoolOptions {
        PoolOptions { ceil_mode, ..self }
    }

    /// The same options with `count_include_pad` set.
    pub const fn count_include_pad(self, count_include_pad: bool) -> PoolOptions {
        PoolOptions {
            count_include_pad,
            ..self
        }
    }

    /// The same options with another stride.
    pub const fn stride(self, stride: (usize, usize)) -> PoolOptions {
        PoolOptions { stride, ..self }
    }

    /// The same options with another padding.
    pub const fn padding(self, padding: (usize, usize)) -> PoolOptions {
        PoolOptions { padding, ..self }
    }
}

impl Tensor {
    /// `max(x, 0)`.
    #[track_caller]
    pub fn relu(&self) -> Result<Tensor> {
        let zero = self.filled(0.0)?;
        Tensor::alu(Op::Max, &[self, &zero])
    }

    /// `x` where positive, `slope * x` elsewhere (in floats).
    #[track_caller]
    pub fn leaky_relu(&self, slope: f64) -> Result<Tensor> {
        let x = self.to_float()?;
        let scaled = x.mul(slope)?;
        x.gt(0.0)?.where_(&x, &scaled)
    }

    /// `1 / (1 + e^-x)`.
    #[track_caller]
    pub fn sigmoid(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let one = x.filled(1.0)?;
        let e = x.neg()?.exp()?;
        Tensor::alu(Op::Add, &[&one, &e])?.reciprocal()
    }

    /// GELU in PyTorch's default (exact) form, `x/2 · (1 + erf(x/√2))`.
    #[track_caller]
    pub fn gelu(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        let e = x.mul(std::f64::consts::FRAC_1_SQRT_2)?.erf()?;
        x.mul(0.5)?.mul(&e.add(1.0)?)
    }

    /// SiLU (swish), `x · sigmoid(x)`.
    #[track_caller]
    pub fn silu(&self) -> Result<Tensor> {
        let x = self.to_float()?;
        x.mul(&x.sigmoid()?)
    }

    /// `e^x / sum(e^x)` along `axis`, shifted by the max for stability.
    #[track_caller]
    pub fn softmax(&self, axis: isize) -> Result<Tensor> {
        let ax = self.axis("softmax", axis)?;
        let x = self.to_float()?;
        let axes = [ax];
        let axes = if x.ndim() == 0 { &[][..] } else { &axes[..] };
        let m = x.reduce_to(ReduceOp::Max, axes, true)?;
        let e = x.sub(&m)?.exp()?;
        let s = e.reduce_to(ReduceOp::Add, axes, true)?;
        e.div(&s)
    }

    /// `log(softmax(x))` along `axis`, computed as `x - max - log(sum(e^(x - max)))`.
    #[track_caller]
    pub fn log_softmax(&self, axis: isize) -> Result<Tensor> {
        let ax = self.axis("log_softmax", axis)?;
        let x = self.to_float()?;
        let axes = [ax];
        let axes = if x.ndim() == 0 { &[][..] } else { &axes[..] };
        let m = x.reduce_to(ReduceOp::Max, axes, true)?;
        let shifted = x.sub(&m)?;
        let lse = shifted.exp()?.reduce_to(ReduceOp::Add, axes, true)?.log()?;
        shifted.sub(&lse)
    }

    /// Layer normalization over `axes`: `(x - mean) / sqrt(var + eps)`
    /// (population variance), then `* weight + bias` when given; `weight`
    /// and `bias` must broadcast to the input's shape.
    #[track_caller]
    pub fn layernorm(
        &self,
        axes: &[isize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        self.reduce_axes("layernorm", Some(axes))?;
        for t in weight.iter().chain(bias.iter()) {
            let ts = t.graph()?.shape.clone();
            let joint = broadcast_shapes("layernorm", &shape, &ts).located()?;
            if joint != shape {
                return Err(Error::shape(ShapeError::new(
                    "layernorm",
                    &[&shape, &ts],
                    "weight and bias must broadcast to the input's shape",
                )));
            }
        }
        let x = self.to_float()?;
        let mu = x.mean(Some(axes), true)?;
        let var = x.var(Some(axes), 0, true)?;
        let mut y = x.sub(&mu)?.mul(&var.add(eps)?.rsqrt()?)?;
        if let Some(w) = weight {
            y = y.mul(w)?;
        }
        if let Some(b) = bias {
            y = y.add(b)?;
        }
        Ok(y)
    }

    /// 2-D convolution (cross-correlation, as in PyTorch) of an NCHW input
    /// with OIHW weights `[C_out, C_in / groups, KH, KW]` and an optional
    /// bias of shape `[C_out]`.
    #[track_caller]
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: ConvOptions,
    ) -> Result<Tensor> {
        let (xs, ws) = (self.graph()?.shape.clone(), weight.graph()?.shape.clone());
        let bias_shape = match bias {
            Some(b) => Some(b.graph()?.shape.clone()),
            None => None,
        };
        conv2d_shape(&xs, &ws, bias_shape.as_deref(), opts).located()?;
        let g = opts.groups;
        let (n, cin_g, cout, kh, kw) = (xs[0], ws[1], ws[0], ws[2], ws[3]);
        let dtype = self.graph()?.dtype.promote(weight.graph()?.dtype);
        let (ph, pw) = opts.padding;
        let x = self
            .cast_to(dtype)?
            .pad_to("conv2d", &[(0, 0), (0, 0), (ph, ph), (pw, pw)])?;
        let s = [opts.stride.0, opts.stride.1];
        let d = [opts.dilation.0, opts.dilation.1];
        let win = x.pool("conv2d", &[kh, kw], &s, &d)?;
        let (oh, ow) = (win.shape()[2], win.shape()[3]);
        let rcout = cout / g;
        // The windows lined up with every output channel's weights.
        let lined = [n, g, cin_g, rcout, oh, ow, kh, kw];
        super::checked_numel("conv2d", &lined)?;
        let win = win
            .reshape_to(&[n, g, cin_g, 1, oh, ow, kh, kw])?
            .expand_to(&lined)?
            .permute_to(&[0, 1, 3, 4, 5, 2, 6, 7])?;
        let w = weight
            .cast_to(dtype)?
            .reshape_to(&[1, g, rcout, 1, 1, cin_g, kh, kw])?;
        let y = win.mul(&w)?.sum(Some(&[-3, -2, -1]), false)?;
        let y = y.reshape_to(&[n, cout, oh, ow])?;
        match bias {
            Some(b) => y.add(&b.reshape_to(&[1, cout, 1, 1])?),
            None => Ok(y),
        }
    }

    /// The extra cells `ceil_mode` adds after the right padding of an
    /// axis of length `i` (0 without it, or when the windows fit).
    fn ceil_extra(i: usize, k: usize, s: usize, p: usize, d: usize) -> usize {
        // Checked: arguments too large to fit give 0 here and an error
        // where the padding is applied.
        let extra = || -> Option<usize> {
            let reach = d.checked_mul(k.checked_sub(1)?)?.checked_add(1)?;
            let span = i.checked_add(p.checked_mul(2)?)?;
            if s == 0 || span < reach {
                return None;
            }
            let mut out = (span - reach).div_ceil(s) + 1;
            if (out - 1).checked_mul(s)? >= i.checked_add(p)? {
                out -= 1;
            }
            Some(
                (out - 1)
                    .checked_mul(s)?
                    .checked_add(reach)?
                    .saturating_sub(span),
            )
        };
        extra().unwrap_or(0)
    }

    /// The padded input cut into pooling windows `[..., OH, OW, KH, KW]`;
    /// `fill` fills the padding and the cells `ceil_mode` adds.
    #[track_caller]
    fn pool_windows(&self, op: &str, opts: PoolOptions, fill: ConstValue) -> Result<Tensor> {
        let rank = self.ndim();
        if rank < 2 {
            return Err(Error::shape(ShapeError::new(
                op,
                &[self.shape()],
                "pooling needs at least 2 axes",
            )));
        }
        let extra = self.pool_extra(opts);
        let mut pads = vec![(0, 0); rank];
        pads[rank - 2] = (opts.padding.0, opts.padding.0.saturating_add(extra[0]));
        pads[rank - 1] = (opts.padding.1, opts.padding.1.saturating_add(extra[1]));
        let x = self.pad_with(op, &pads, fill)?;
        let k = [opts.kernel.0, opts.kernel.1];
        let s = [opts.stride.0, opts.stride.1];
        x.pool(op, &k, &s, &[opts.dilation.0, opts.dilation.1])
    }

    /// The `ceil_mode` cells of the last two axes.
    fn pool_extra(&self, opts: PoolOptions) -> [usize; 2] {
        if !opts.ceil_mode || self.ndim() < 2 {
            return [0, 0];
        }
        let r = self.ndim();
        let (h, w) = (self.shape()[r - 2], self.shape()[r - 1]);
        [
            Tensor::ceil_extra(
                h,
                opts.kernel.0,
                opts.stride.0,
                opts.padding.0,
                opts.dilation.0,
            ),
            Tensor::ceil_extra(
                w,
                opts.kernel.1,
                opts.stride.1,
                opts.padding.1,
                opts.dilation.1,
            ),
        ]
    }

    /// Max pooling over the last two axes (padding never wins).
    #[track_caller]
    pub fn max_pool2d(&self, opts: PoolOptions) -> Result<Tensor> {
        let dtype = self.graph()?.dtype;
        let windows = self.pool_windows("max_pool2d", opts, ConstValue::min_of(dtype))?;
        windows.max(Some(&[-2, -1]), false)
    }

    /// Average pooling over the last two axes: each window's sum divided
    /// by its count of input cells, plus its padding cells with
    /// `count_include_pad` (never the cells `ceil_mode` adds).
    #[track_caller]
    pub fn avg_pool2d(&self, opts: PoolOptions) -> Result<Tensor> {
        self.avg_pool_as("avg_pool2d", opts)
    }

    #[track_caller]
    fn avg_pool_as(&self, op: &str, opts: PoolOptions) -> Result<Tensor> {
        let x = self.to_float()?;
        let windows = x.pool_windows(op, opts, ConstValue::Float(0.0))?;
        let sums = windows.sum(Some(&[-2, -1]), false)?;
        let r = x.ndim();
        let (h, w) = (x.shape()[r - 2], x.shape()[r - 1]);
        let dtype = x.graph()?.dtype;
        let ones = Tensor::constant(ConstValue::Float(1.0), dtype, &[h, w]);
        let p = [opts.padding.0, opts.padding.1];
        let counted = if opts.count_include_pad {
            ones.pad_with(op, &[(p[0], p[0]), (p[1], p[1])], ConstValue::Float(1.0))?
        } else {
            ones.pad_to(op, &[(p[0], p[0]), (p[1], p[1])])?
        };
        let extra = x.pool_extra(opts);
        let counted = counted.pad_to(op, &[(0, extra[0]), (0, extra[1])])?;
        let k = [opts.kernel.0, opts.kernel.1];
        let s = [opts.stride.0, opts.stride.1];
        let counts = counted
            .pool(op, &k, &s, &[opts.dilation.0, opts.dilation.1])?
            .sum(Some(&[-2, -1]), false)?;
        sums.div(&counts)
    }

    /// Max pooling over the last axis: [`Tensor::max_pool2d`] with a
    /// height-1 window; `opts` gives the length's window in its second
    /// components.
    #[track_caller]
    pub fn max_pool1d(&self, opts: PoolOptions) -> Result<Tensor> {
        let flat = Tensor::pool1d_options(opts);
        let dtype = self.graph()?.dtype;
        let y = self
            .nonscalar_unsqueeze("max_pool1d")?
            .pool_windows("max_pool1d", flat, ConstValue::min_of(dtype))?
            .max(Some(&[-2, -1]), false)?;
        let mut out = y.shape().to_vec();
        out.remove(out.len() - 2);
        y.reshape_to(&out)
    }

    /// Average pooling over the last axis, like [`Tensor::max_pool1d`].
    #[track_caller]
    pub fn avg_pool1d(&self, opts: PoolOptions) -> Result<Tensor> {
        let y = self
            .nonscalar_unsqueeze("avg_pool1d")?
            .avg_pool_as("avg_pool1d", Tensor::pool1d_options(opts))?;
        let mut out = y.shape().to_vec();
        out.remove(out.len() - 2);
        y.reshape_to(&out)
    }

    /// `opts` restricted to the width (height window 1, no padding).
    fn pool1d_options(opts: PoolOptions) -> PoolOptions {
        PoolOptions {
            kernel: (1, opts.kernel.1),
            stride: (1, opts.stride.1),
            padding: (0, opts.padding.1),
            dilation: (1, opts.dilation.1),
            ..opts
        }
    }

    /// A size-1 axis before the last one (errors of `op` for a scalar).
    #[track_caller]
    fn nonscalar_unsqueeze(&self, op: &str) -> Result<Tensor> {
        let shape = self.graph()?.shape.clone();
        if shape.is_empty() {
            return Err(Error::shape(ShapeError::new(
                op,
                &[&shape],
                "pooling needs at least 1 axis",
            )));
        }
        self.unsqueeze_at(shape.len() - 1)
    }

    /// Mean cross-entropy of `self` (logits `[..., C]`, classes on the
    /// last axis) against integer class labels of shape `[...]`. A label
    /// outside `0..C` selects nothing and contributes 0.
    #[track_caller]
    pub fn cross_entropy(&self, labels: &Tensor) -> Result<Tensor> {
        let (ls, ts) = (self.graph()?.shape.clone(), labels.graph()?.shape.clone());
        let label_type = labels.graph()?.dtype;
        if !label_type.is_int() {
            return Err(Error::dtype(
                "cross_entropy",
                format!("labels must be integers, not {label_type}"),
            ));
        }
        if ls.is_empty() || ls[..ls.len() - 1] != ts[..] {
            return Err(Error::shape(ShapeError::new(
                "cross_entropy",
                &[&ls, &ts],
                "labels must have the logits' shape without the class axis",
            )));
        }
        let classes = ls[ls.len() - 1];
        let logp = self.log_softmax(-1)?;
        let ids = Tensor::counting("cross_entropy", classes, ScalarType::I32)?;
        let onehot = labels.try_unsqueeze(-1)?.eq(&ids)?;
        let picked = onehot.where_(&logp, 0.0)?.sum(Some(&[-1]), false)?;
        picked.neg()?.mean(None, false)
    }
}
