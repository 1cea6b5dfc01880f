//! Pooling over the last 1, 2 or 3 axes: `max_pool{1,2,3}d` (optionally
//! with indices), `avg_pool{1,2,3}d` and `max_unpool{1,2,3}d`.
//!
//! Every variant is one geometry, `PoolGeometry` (`morok_core::shape`), over `n` trailing axes:
//! the input is padded (with the dtype's minimum for max pooling, zeros
//! for average pooling; `ceil_mode` adds cells after the right padding)
//! and cut into windows `[..., o_1..o_n, k_1..k_n]` by the movement-only
//! `pool` view, then reduced over the window axes.
//!
//! Indices (`return_indices`) are PyTorch's: the flat position of the
//! window's maximum in its input plane (`h·W + w` in 2-D), the first one
//! where several cells hold the maximum. They are computed as the
//! smallest flat position whose value equals the window's maximum (or,
//! where the window holds NaNs, the last NaN's, as PyTorch's loop keeps);
//! padding cells carry `i64::MAX` there so that they never win, and a
//! window made of padding only (possible when the padding exceeds half
//! the window, which PyTorch refuses) gives index `-1`.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{pool_shape, unpool_shape, Pads, PoolGeometry};
use morok_core::{ConstValue, ScalarType};

/// Options of [`Tensor::max_pool2d`], [`Tensor::avg_pool2d`] and the 1-D
/// pools (which use the second components).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// Window size, (height, width).
    pub kernel: (usize, usize),
    /// Step between windows, (height, width).
    pub stride: (usize, usize),
    /// Padding (negative: cropping), `(before, after)` for height and
    /// width ([`Pads`]; the 1-d pools use the width's).
    pub padding: Pads<2>,
    /// Distance between window taps, (height, width) (max pooling only in
    /// PyTorch; honored by both here).
    pub dilation: (usize, usize),
    /// `ceil_mode`: a last, partial window is kept where it starts inside
    /// the input or the left padding.
    pub ceil_mode: bool,
    /// `count_include_pad` (average pooling): the padding counts in the
    /// divisor (the extra cells `ceil_mode` adds never do).
    pub count_include_pad: bool,
    /// `divisor_override` (average pooling): every window's sum is divided
    /// by this instead of its cell count (0 is an error).
    pub divisor_override: Option<usize>,
}

impl PoolOptions {
    /// Windows of `kernel` with a stride equal to the kernel, no padding.
    pub const fn new(kernel: (usize, usize)) -> PoolOptions {
        PoolOptions {
            kernel,
            stride: kernel,
            padding: Pads::ZERO,
            dilation: (1, 1),
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
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

    /// The same options with a `divisor_override`.
    pub const fn divisor_override(self, divisor: usize) -> PoolOptions {
        PoolOptions {
            divisor_override: Some(divisor),
            ..self
        }
    }

    /// The same options with another stride.
    pub const fn stride(self, stride: (usize, usize)) -> PoolOptions {
        PoolOptions { stride, ..self }
    }

    /// The same options with another padding: `(h, w)` on both sides,
    /// or `(before, after)` pairs as [`Pads`].
    pub fn padding(self, padding: impl Into<Pads<2>>) -> PoolOptions {
        PoolOptions {
            padding: padding.into(),
            ..self
        }
    }

    /// The options as the shape rules' geometry of two axes.
    pub fn geometry(self) -> PoolGeometry {
        PoolGeometry {
            kernel: vec![self.kernel.0, self.kernel.1],
            stride: vec![self.stride.0, self.stride.1],
            padding: self.padding.to_vec(),
            dilation: vec![self.dilation.0, self.dilation.1],
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
            divisor_override: self.divisor_override,
        }
    }

    fn geom1(self) -> PoolGeometry {
        PoolGeometry {
            kernel: vec![self.kernel.1],
            stride: vec![self.stride.1],
            padding: vec![self.padding.0[1]],
            dilation: vec![self.dilation.1],
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
            divisor_override: self.divisor_override,
        }
    }
}

/// Options of [`Tensor::max_pool3d`] and [`Tensor::avg_pool3d`]
/// ((depth, height, width); the fields mean what [`PoolOptions`]' do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool3dOptions {
    /// Window size.
    pub kernel: (usize, usize, usize),
    /// Step between windows.
    pub stride: (usize, usize, usize),
    /// Padding (negative: cropping), `(before, after)` per axis
    /// ([`Pads`]).
    pub padding: Pads<3>,
    /// Distance between window taps.
    pub dilation: (usize, usize, usize),
    /// `ceil_mode`, as in [`PoolOptions::ceil_mode`].
    pub ceil_mode: bool,
    /// `count_include_pad` (average pooling).
    pub count_include_pad: bool,
    /// `divisor_override` (average pooling; 0 is an error).
    pub divisor_override: Option<usize>,
}

impl Pool3dOptions {
    /// Windows of `kernel` with a stride equal to the kernel, no padding.
    pub const fn new(kernel: (usize, usize, usize)) -> Pool3dOptions {
        Pool3dOptions {
            kernel,
            stride: kernel,
            padding: Pads::ZERO,
            dilation: (1, 1, 1),
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        }
    }

    /// The same options with another stride.
    pub const fn stride(self, stride: (usize, usize, usize)) -> Pool3dOptions {
        Pool3dOptions { stride, ..self }
    }

    /// The same options with another padding: `(d, h, w)` on both
    /// sides, or `(before, after)` pairs as [`Pads`].
    pub fn padding(self, padding: impl Into<Pads<3>>) -> Pool3dOptions {
        Pool3dOptions {
            padding: padding.into(),
            ..self
        }
    }

    /// The same options with another dilation.
    pub const fn dilation(self, dilation: (usize, usize, usize)) -> Pool3dOptions {
        Pool3dOptions { dilation, ..self }
    }

    /// The same options with `ceil_mode` set.
    pub const fn ceil_mode(self, ceil_mode: bool) -> Pool3dOptions {
        Pool3dOptions { ceil_mode, ..self }
    }

    /// The same options with `count_include_pad` set.
    pub const fn count_include_pad(self, count_include_pad: bool) -> Pool3dOptions {
        Pool3dOptions {
            count_include_pad,
            ..self
        }
    }

    /// The same options with a `divisor_override`.
    pub const fn divisor_override(self, divisor: usize) -> Pool3dOptions {
        Pool3dOptions {
            divisor_override: Some(divisor),
            ..self
        }
    }

    /// The options as the shape rules' geometry of three axes.
    pub fn geometry(self) -> PoolGeometry {
        let t = |v: (usize, usize, usize)| vec![v.0, v.1, v.2];
        PoolGeometry {
            kernel: t(self.kernel),
            stride: t(self.stride),
            padding: self.padding.to_vec(),
            dilation: t(self.dilation),
            ceil_mode: self.ceil_mode,
            count_include_pad: self.count_include_pad,
            divisor_override: self.divisor_override,
        }
    }
}

impl Tensor {
    /// The spatial shape (the last `g.rank()` axes), or an error of `op`
    /// when `self` has fewer axes.
    #[track_caller]
    fn pooled_axes(&self, op: &str, g: &PoolGeometry) -> Result<Vec<usize>> {
        let shape = self.graph()?.shape.clone();
        pool_shape(op, &shape, g).located()?;
        Ok(shape[shape.len() - g.rank()..].to_vec())
    }

    /// `self` padded for `g` (the padding and the `ceil_mode` cells
    /// filled with `fill`) and cut into windows `[..., o.., k..]`.
    #[track_caller]
    fn pool_windows_nd(&self, op: &str, g: &PoolGeometry, fill: ConstValue) -> Result<Tensor> {
        self.pooled_axes(op, g)?;
        let (x, _) = self.crop_for_pad(op, &g.input_pads(self.ndim()))?;
        let lead = x.ndim() - g.rank();
        let spatial = x.shape()[lead..].to_vec();
        let mut pads = vec![(0, 0); lead];
        for (j, &i) in spatial.iter().enumerate() {
            let (before, after) = g.grow(j);
            pads.push((before, after.saturating_add(g.ceil_extra(j, i))));
        }
        let mut padded = x.pad_with(op, &pads, fill)?;
        if pads.iter().any(|&(a, b)| a > 0 || b > 0) {
            // Its own buffer, as a convolution's padded input (see
            // `conv_nd`): the windows then read it without a border test
            // per load (ResNet-50's 3×3 max pool of the stem's output:
            // 1.5 ms with the tests, the copy 0.1 ms).
            padded = padded.contiguous()?;
        }
        padded.pool(op, &g.kernel, &g.stride, &g.dilation)
    }

    /// The window axes of a pooled tensor of rank `r` (the last `n`).
    fn window_axes(r: usize, n: usize) -> Vec<isize> {
        (r - n..r).map(|a| a as isize).collect()
    }

    #[track_caller]
    fn max_pool_nd(&self, op: &str, g: &PoolGeometry) -> Result<Tensor> {
        let dtype = self.graph()?.dtype;
        let w = self.pool_windows_nd(op, g, ConstValue::min_of(dtype))?;
        w.max(Some(&Tensor::window_axes(w.ndim(), g.rank())), false)
    }

    /// The window maxima and their flat positions in the input plane (see
    /// the module docs).
    #[track_caller]
    fn max_pool_indices_nd(&self, op: &str, g: &PoolGeometry) -> Result<(Tensor, Tensor)> {
        let dtype = self.graph()?.dtype;
        let spatial = self.pooled_axes(op, g)?;
        let w = self.pool_windows_nd(op, g, ConstValue::min_of(dtype))?;
        let axes = Tensor::window_axes(w.ndim(), g.rank());
        let best = w.max(Some(&axes), true)?;
        let plane = super::checked_numel(op, &spatial)?;
        let never = ConstValue::Int(i64::MAX);
        let positions = Tensor::counting(op, plane, ScalarType::I64)?
            .reshape_to(&spatial)?
            .pool_windows_nd(op, g, never)?;
        let hit = w.eq(&best)?;
        let first = hit.where_(&positions, i64::MAX)?.min(Some(&axes), false)?;
        let mut first = first.eq(i64::MAX)?.where_(-1i64, &first)?;
        if dtype.is_float() {
            // A NaN is the maximum; PyTorch's loop keeps the last one.
            let last_nan = w
                .isnan()?
                .where_(&positions, -1i64)?
                .max(Some(&axes), false)?;
            first = last_nan.ge(0i64)?.where_(&last_nan, &first)?;
        }
        let values = best.reshape_to(first.shape())?;
        Ok((values, first))
    }

    #[track_caller]
    fn avg_pool_nd(&self, op: &str, g: &PoolGeometry) -> Result<Tensor> {
        let x = self.to_float()?;
        let spatial = x.pooled_axes(op, g)?;
        let windows = x.pool_windows_nd(op, g, ConstValue::Float(0.0))?;
        let axes = Tensor::window_axes(windows.ndim(), g.rank());
        let sums = windows.sum(Some(&axes), false)?;
        if let Some(d) = g.divisor_override {
            if d == 0 {
                return Err(Error::argument(
                    op,
                    format!("divisor_override is 0 (input {:?})", x.shape()),
                ));
            }
            return sums.div(d as f64);
        }
        let dtype = x.graph()?.dtype;
        let ones = Tensor::constant(ConstValue::Float(1.0), dtype, &spatial);
        let (ones, pads) = ones.crop_for_pad(op, &g.padding)?;
        let counted = if g.count_include_pad {
            ones.pad_with(op, &pads, ConstValue::Float(1.0))?
        } else {
            ones.pad_to(op, &pads)?
        };
        let extra: Vec<(usize, usize)> = ones
            .shape()
            .iter()
            .enumerate()
            .map(|(j, &i)| (0, g.ceil_extra(j, i)))
            .collect();
        let counted = counted.pad_to(op, &extra)?;
        let cw = counted.pool(op, &g.kernel, &g.stride, &g.dilation)?;
        let counts = cw.sum(Some(&Tensor::window_axes(cw.ndim(), g.rank())), false)?;
        sums.div(&counts)
    }

    /// PyTorch's `max_unpool`: a zero tensor of `output_size` (default
    /// `(o - 1)·stride - before - after + kernel` per axis) with each value of
    /// `self` written at the flat plane position `indices` holds. A
    /// position out of range is dropped; where two write one position,
    /// the later one wins.
    #[track_caller]
    fn max_unpool_nd(
        &self,
        op: &str,
        indices: &Tensor,
        g: &PoolGeometry,
        output_size: Option<Vec<usize>>,
    ) -> Result<Tensor> {
        let n = g.rank();
        let (xs, is) = (self.graph()?.shape.clone(), indices.graph()?.shape.clone());
        super::indexing::integer_index(op, indices)?;
        let full = unpool_shape(op, &xs, &is, g, output_size.as_deref())
            .located()?
            .to_vec();
        let lead = xs.len() - n;
        let out = &full[lead..];
        super::checked_numel(op, &full)?;
        let plane: usize = out.iter().product();
        let pooled: usize = xs[lead..].iter().product();
        let mut flat = xs[..lead].to_vec();
        flat.push(pooled);
        let mut target = xs[..lead].to_vec();
        target.push(plane);
        let dtype = self.graph()?.dtype;
        Tensor::constant(ConstValue::zero(dtype), dtype, &target)
            .scatter(-1, &indices.reshape_to(&flat)?, &self.reshape_to(&flat)?)?
            .reshape_to(&full)
    }

    /// Max pooling over the last two axes (padding never wins).
    #[track_caller]
    pub fn max_pool2d(&self, opts: PoolOptions) -> Result<Tensor> {
        self.max_pool_nd("max_pool2d", &opts.geometry())
    }

    /// [`Tensor::max_pool2d`] with `return_indices`: the maxima and the
    /// `i64` flat positions `h·W + w` of each in its input plane.
    #[track_caller]
    pub fn max_pool2d_with_indices(&self, opts: PoolOptions) -> Result<(Tensor, Tensor)> {
        self.max_pool_indices_nd("max_pool2d_with_indices", &opts.geometry())
    }

    /// Average pooling over the last two axes: each window's sum divided
    /// by its count of input cells, plus its padding cells with
    /// `count_include_pad` (never the cells `ceil_mode` adds), or by
    /// `divisor_override`.
    #[track_caller]
    pub fn avg_pool2d(&self, opts: PoolOptions) -> Result<Tensor> {
        self.avg_pool_nd("avg_pool2d", &opts.geometry())
    }

    /// PyTorch's `max_unpool2d(self, indices, kernel, stride, padding,
    /// output_size)`: the inverse of [`Tensor::max_pool2d_with_indices`]
    /// (`opts` gives kernel, stride and padding), zeros elsewhere.
    #[track_caller]
    pub fn max_unpool2d(
        &self,
        indices: &Tensor,
        opts: PoolOptions,
        output_size: Option<(usize, usize)>,
    ) -> Result<Tensor> {
        let size = output_size.map(|(h, w)| vec![h, w]);
        self.max_unpool_nd("max_unpool2d", indices, &opts.geometry(), size)
    }

    /// Max pooling over the last axis; `opts` gives the length's window
    /// in its second components.
    #[track_caller]
    pub fn max_pool1d(&self, opts: PoolOptions) -> Result<Tensor> {
        self.max_pool_nd("max_pool1d", &opts.geom1())
    }

    /// [`Tensor::max_pool1d`] with `return_indices`.
    #[track_caller]
    pub fn max_pool1d_with_indices(&self, opts: PoolOptions) -> Result<(Tensor, Tensor)> {
        self.max_pool_indices_nd("max_pool1d_with_indices", &opts.geom1())
    }

    /// Average pooling over the last axis, like [`Tensor::max_pool1d`].
    #[track_caller]
    pub fn avg_pool1d(&self, opts: PoolOptions) -> Result<Tensor> {
        self.avg_pool_nd("avg_pool1d", &opts.geom1())
    }

    /// PyTorch's `max_unpool1d` (the second components of `opts`).
    #[track_caller]
    pub fn max_unpool1d(
        &self,
        indices: &Tensor,
        opts: PoolOptions,
        output_size: Option<usize>,
    ) -> Result<Tensor> {
        let size = output_size.map(|l| vec![l]);
        self.max_unpool_nd("max_unpool1d", indices, &opts.geom1(), size)
    }

    /// Max pooling over the last three axes.
    #[track_caller]
    pub fn max_pool3d(&self, opts: Pool3dOptions) -> Result<Tensor> {
        self.max_pool_nd("max_pool3d", &opts.geometry())
    }

    /// [`Tensor::max_pool3d`] with `return_indices` (flat positions `d·H·W
    /// + h·W + w`).
    #[track_caller]
    pub fn max_pool3d_with_indices(&self, opts: Pool3dOptions) -> Result<(Tensor, Tensor)> {
        self.max_pool_indices_nd("max_pool3d_with_indices", &opts.geometry())
    }

    /// Average pooling over the last three axes, like
    /// [`Tensor::avg_pool2d`].
    #[track_caller]
    pub fn avg_pool3d(&self, opts: Pool3dOptions) -> Result<Tensor> {
        self.avg_pool_nd("avg_pool3d", &opts.geometry())
    }

    /// PyTorch's `max_unpool3d`.
    #[track_caller]
    pub fn max_unpool3d(
        &self,
        indices: &Tensor,
        opts: Pool3dOptions,
        output_size: Option<(usize, usize, usize)>,
    ) -> Result<Tensor> {
        let size = output_size.map(|(d, h, w)| vec![d, h, w]);
        self.max_unpool_nd("max_unpool3d", indices, &opts.geometry(), size)
    }
}
