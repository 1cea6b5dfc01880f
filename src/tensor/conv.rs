//! Convolutions over 1, 2 or 3 spatial axes and their transposes.
//!
//! One geometry, `ConvNd` (`morok_core::shape`), serves every rank. `conv_nd` cuts the
//! padded input into windows with the movement-only `pool` view
//! (`[N, C, o.., k..]`), lines the windows up with the weights per group,
//! multiplies and sums over `(C, k..)`. `conv_transpose_nd` is a stride-1
//! `conv_nd` of the input with `s - 1` zeros between elements, padded by
//! `d·(k - 1) - p` (cropped where negative, plus the output padding at
//! the end), with the kernel flipped and its channel axes swapped per
//! group.

use super::Tensor;
use crate::error::{Located, Result};
use morok_core::shape::{conv2d_shape, conv_nd_shape, conv_transpose_nd_shape, ConvNd, Pads};

/// Options of [`Tensor::conv2d`] (PyTorch's defaults: stride 1, no
/// padding, no dilation, one group): the core shape rules' geometry.
pub use morok_core::shape::ConvGeometry as ConvOptions;

/// Options of [`Tensor::conv1d`] (PyTorch's keyword arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv1dOptions {
    /// Distance between windows.
    pub stride: usize,
    /// Zeros added (negative: cropped) before and after ([`Pads`]).
    pub padding: Pads<1>,
    /// Distance between window taps.
    pub dilation: usize,
    /// Channel groups.
    pub groups: usize,
}

impl Default for Conv1dOptions {
    fn default() -> Self {
        Conv1dOptions {
            stride: 1,
            padding: Pads::ZERO,
            dilation: 1,
            groups: 1,
        }
    }
}

/// Options of [`Tensor::conv3d`] (PyTorch's keyword arguments, `(depth,
/// height, width)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv3dOptions {
    /// Distance between windows.
    pub stride: (usize, usize, usize),
    /// Zeros added (negative: cropped), `(before, after)` per axis
    /// ([`Pads`]).
    pub padding: Pads<3>,
    /// Distance between window taps.
    pub dilation: (usize, usize, usize),
    /// Channel groups.
    pub groups: usize,
}

impl Default for Conv3dOptions {
    fn default() -> Self {
        Conv3dOptions {
            stride: (1, 1, 1),
            padding: Pads::ZERO,
            dilation: (1, 1, 1),
            groups: 1,
        }
    }
}

/// Options of [`Tensor::conv_transpose2d`] (PyTorch's keyword arguments,
/// `(height, width)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvTransposeOptions {
    /// The stride of the convolution this transposes.
    pub stride: (usize, usize),
    /// Its padding, `(before, after)` per axis ([`Pads`]): removed from
    /// the output's borders (negative amounts add zeros there).
    pub padding: Pads<2>,
    /// Extra rows / columns at the output's end (less than the stride or
    /// the dilation).
    pub output_padding: (usize, usize),
    /// Distance between kernel taps.
    pub dilation: (usize, usize),
    /// Channel groups.
    pub groups: usize,
}

impl Default for ConvTransposeOptions {
    fn default() -> Self {
        ConvTransposeOptions {
            stride: (1, 1),
            padding: Pads::ZERO,
            output_padding: (0, 0),
            dilation: (1, 1),
            groups: 1,
        }
    }
}

/// Options of [`Tensor::conv_transpose3d`] (`(depth, height, width)`; the
/// fields mean what [`ConvTransposeOptions`]' do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvTranspose3dOptions {
    /// The stride of the convolution this transposes.
    pub stride: (usize, usize, usize),
    /// Its padding, `(before, after)` per axis ([`Pads`]), as in
    /// [`ConvTransposeOptions::padding`].
    pub padding: Pads<3>,
    /// Extra cells at the output's end (less than the stride or the
    /// dilation).
    pub output_padding: (usize, usize, usize),
    /// Distance between kernel taps.
    pub dilation: (usize, usize, usize),
    /// Channel groups.
    pub groups: usize,
}

impl Default for ConvTranspose3dOptions {
    fn default() -> Self {
        ConvTranspose3dOptions {
            stride: (1, 1, 1),
            padding: Pads::ZERO,
            output_padding: (0, 0, 0),
            dilation: (1, 1, 1),
            groups: 1,
        }
    }
}

/// The shapes of a convolution's input, weight and optional bias.
type ConvShapes = (Vec<usize>, Vec<usize>, Option<Vec<usize>>);

/// A convolution's geometry.
fn geometry(
    stride: Vec<usize>,
    padding: Vec<(isize, isize)>,
    output_padding: Vec<usize>,
    dilation: Vec<usize>,
    groups: usize,
) -> ConvNd {
    ConvNd {
        stride,
        padding,
        output_padding,
        dilation,
        groups,
    }
}

/// A pair as a vector.
fn v2(t: (usize, usize)) -> Vec<usize> {
    vec![t.0, t.1]
}

/// A triple as a vector.
fn v3(t: (usize, usize, usize)) -> Vec<usize> {
    vec![t.0, t.1, t.2]
}

impl Conv1dOptions {
    /// The options as the shape rules' geometry of one axis.
    pub fn geometry(self) -> ConvNd {
        geometry(
            vec![self.stride],
            self.padding.to_vec(),
            vec![0],
            vec![self.dilation],
            self.groups,
        )
    }
}

impl Conv3dOptions {
    /// The options as the shape rules' geometry of three axes.
    pub fn geometry(self) -> ConvNd {
        geometry(
            v3(self.stride),
            self.padding.to_vec(),
            vec![0; 3],
            v3(self.dilation),
            self.groups,
        )
    }
}

impl ConvTransposeOptions {
    /// The options as the shape rules' geometry of two axes
    /// (`conv_transpose1d` takes its [`ConvNd::last_axis`]).
    pub fn geometry(self) -> ConvNd {
        geometry(
            v2(self.stride),
            self.padding.to_vec(),
            v2(self.output_padding),
            v2(self.dilation),
            self.groups,
        )
    }
}

impl ConvTranspose3dOptions {
    /// The options as the shape rules' geometry of three axes.
    pub fn geometry(self) -> ConvNd {
        geometry(
            v3(self.stride),
            self.padding.to_vec(),
            v3(self.output_padding),
            v3(self.dilation),
            self.groups,
        )
    }
}

impl Tensor {
    /// The shapes of input, weight and bias.
    #[track_caller]
    fn conv_shapes(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<ConvShapes> {
        let (xs, ws) = (self.graph()?.shape.to_vec(), weight.graph()?.shape.to_vec());
        let bs = match bias {
            Some(b) => Some(b.graph()?.shape.to_vec()),
            None => None,
        };
        Ok((xs, ws, bs))
    }

    /// The convolution of `self` (`[N, C, spatial..]`) with `weight`
    /// (`[O, C/groups, k..]`) and `bias` (`[O]`); errors name `op`.
    #[track_caller]
    fn conv_nd(
        &self,
        op: &str,
        weight: &Tensor,
        bias: Option<&Tensor>,
        g: &ConvNd,
    ) -> Result<Tensor> {
        let (xs, ws, bs) = self.conv_shapes(weight, bias)?;
        conv_nd_shape(op, &xs, &ws, bs.as_deref(), g).located()?;
        let n = g.rank();
        let groups = g.groups;
        let dtype = self.graph()?.dtype.promote(weight.graph()?.dtype);
        let mut pads = vec![(0, 0), (0, 0)];
        pads.extend(&g.padding);
        let kernel = &ws[2..];
        let mut padded = self.cast_to(dtype)?.pad_signed(op, &pads)?;
        if g.padding.iter().any(|&(a, b)| a > 0 || b > 0) {
            // Its own buffer (a copy kernel): the windows of a padded input
            // then have no per-lane border test on each load, so the inner
            // loop along the output row becomes vector loads and FMAs (the
            // border tests made a 3×3 convolution's lanes scalar; the copy
            // costs one pass over the input, against nine reads of it per
            // output channel block).
            padded = padded.contiguous()?;
        }
        let win = padded.pool(op, kernel, &g.stride, &g.dilation)?;
        let outs = win.shape()[2..2 + n].to_vec();
        let (batch, cin_g, cout) = (xs[0], ws[1], ws[0]);
        let rcout = cout / groups;
        // The windows lined up with every output channel's weights:
        // [N, G, Cin/G, 1, o.., k..] -> [N, G, Cout/G, o.., Cin/G, k..].
        let mut grouped = vec![batch, groups, cin_g, 1];
        grouped.extend(&outs);
        grouped.extend(kernel);
        let mut lined = grouped.clone();
        lined[3] = rcout;
        super::checked_numel(op, &lined)?;
        let mut perm = vec![0, 1, 3];
        perm.extend(4..4 + n);
        perm.push(2);
        perm.extend(4 + n..4 + 2 * n);
        let win = win
            .reshape_to(&grouped)?
            .expand_to(&lined)?
            .permute_to(&perm)?;
        let mut wshape = vec![1, groups, rcout];
        wshape.extend(std::iter::repeat_n(1, n));
        wshape.push(cin_g);
        wshape.extend(kernel);
        let w = weight.cast_to(dtype)?.reshape_to(&wshape)?;
        let summed: Vec<isize> = (-(n as isize) - 1..0).collect();
        let y = win.mul(&w)?.sum(Some(&summed), false)?;
        let mut out = vec![batch, cout];
        out.extend(&outs);
        let y = y.reshape_to(&out)?;
        match bias {
            Some(b) => {
                let mut at = vec![1; n + 2];
                at[1] = cout;
                y.add(&b.reshape_to(&at)?)
            }
            None => Ok(y),
        }
    }

    /// The transposed convolution of `self` (`[N, Cin, spatial..]`) with
    /// `weight` (`[Cin, Cout/groups, k..]`) and `bias` (`[Cout]`): each
    /// output axis is `(i - 1)·s - p_before - p_after + d·(k - 1) + output_padding + 1`
    /// long. Errors name `op`.
    #[track_caller]
    fn conv_transpose_nd(
        &self,
        op: &str,
        weight: &Tensor,
        bias: Option<&Tensor>,
        g: &ConvNd,
    ) -> Result<Tensor> {
        let (xs, ws, bs) = self.conv_shapes(weight, bias)?;
        let out = conv_transpose_nd_shape(op, &xs, &ws, bs.as_deref(), g).located()?;
        let n = g.rank();
        let groups = g.groups;
        let (s, op_, d) = (&g.stride, &g.output_padding, &g.dilation);
        let k = &ws[2..];
        let mut pads = vec![(0isize, 0isize); 2];
        for j in 0..n {
            let (before, after) = g.padding[j];
            let edge = (d[j] * (k[j] - 1)) as isize;
            pads.push((edge - before, edge - after + op_[j] as isize));
        }
        super::checked_numel(op, &out)?;
        // Zeros between the input's elements: [N, C, i, 1, ..] padded to
        // [N, C, i, s, ..], merged and cut to (i - 1)·s + 1.
        let (batch, c) = (xs[0], xs[1]);
        let mut split = vec![batch, c];
        let mut spread_pads = vec![(0, 0), (0, 0)];
        let mut merged = vec![batch, c];
        let mut cut = vec![(0, batch), (0, c)];
        for j in 0..n {
            split.extend([xs[2 + j], 1]);
            spread_pads.extend([(0, 0), (0, s[j] - 1)]);
            merged.push(xs[2 + j] * s[j]);
            cut.push((0, (xs[2 + j] - 1) * s[j] + 1));
        }
        let spread = self
            .reshape_to(&split)?
            .pad_to(op, &spread_pads)?
            .reshape_to(&merged)?
            .shrink_to(&cut)?;
        let padded = spread.pad(&pads, 0u8)?;
        let (cin_g, cout_g) = (c / groups, ws[1]);
        let mut by_group = vec![groups, cin_g, cout_g];
        by_group.extend(k);
        let mut perm = vec![0, 2, 1];
        perm.extend(3..3 + n);
        let mut flipped = vec![groups * cout_g, cin_g];
        flipped.extend(k);
        let kernel = weight
            .reshape_to(&by_group)?
            .permute_to(&perm)?
            .reshape_to(&flipped)?
            .flip_axes(&(2..2 + n).collect::<Vec<_>>())?;
        let unit = ConvNd {
            stride: vec![1; n],
            padding: vec![(0, 0); n],
            output_padding: vec![0; n],
            dilation: d.clone(),
            groups,
        };
        padded.conv_nd(op, &kernel, bias, &unit)
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
        let (xs, ws, bs) = self.conv_shapes(weight, bias)?;
        conv2d_shape(&xs, &ws, bs.as_deref(), opts).located()?;
        let g = geometry(
            v2(opts.stride),
            opts.padding.to_vec(),
            vec![0, 0],
            v2(opts.dilation),
            opts.groups,
        );
        self.conv_nd("conv2d", weight, bias, &g)
    }

    /// PyTorch's `conv1d(input [N, C, L], weight [O, C/groups, K], bias
    /// [O])`, giving `[N, O, (L + 2p - d(K-1) - 1) / s + 1]`.
    #[track_caller]
    pub fn conv1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: Conv1dOptions,
    ) -> Result<Tensor> {
        self.conv_nd("conv1d", weight, bias, &opts.geometry())
    }

    /// PyTorch's `conv3d(input [N, C, D, H, W], weight [O, C/groups, KD,
    /// KH, KW], bias [O])`.
    #[track_caller]
    pub fn conv3d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: Conv3dOptions,
    ) -> Result<Tensor> {
        self.conv_nd("conv3d", weight, bias, &opts.geometry())
    }

    /// PyTorch's `conv_transpose2d(input [N, Cin, H, W], weight [Cin,
    /// Cout/groups, KH, KW], bias [Cout])`: the output is `(H - 1)·s - p_before - p_after +
    /// d·(K - 1) + output_padding + 1` high (and so wide).
    #[track_caller]
    pub fn conv_transpose2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: ConvTransposeOptions,
    ) -> Result<Tensor> {
        self.conv_transpose_nd("conv_transpose2d", weight, bias, &opts.geometry())
    }

    /// PyTorch's `conv_transpose1d` (`[N, Cin, L]`, weight `[Cin,
    /// Cout/groups, K]`); `opts` gives the length's stride, padding,
    /// output padding and dilation in its second components.
    #[track_caller]
    pub fn conv_transpose1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: ConvTransposeOptions,
    ) -> Result<Tensor> {
        self.conv_transpose_nd(
            "conv_transpose1d",
            weight,
            bias,
            &opts.geometry().last_axis(),
        )
    }

    /// PyTorch's `conv_transpose3d` (`[N, Cin, D, H, W]`, weight `[Cin,
    /// Cout/groups, KD, KH, KW]`, bias `[Cout]`).
    #[track_caller]
    pub fn conv_transpose3d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: ConvTranspose3dOptions,
    ) -> Result<Tensor> {
        self.conv_transpose_nd("conv_transpose3d", weight, bias, &opts.geometry())
    }
}
