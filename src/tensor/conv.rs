//! `conv1d`: a 1-D convolution as a [`Tensor::conv2d`] over a height-1
//! image (the arguments are checked here, so errors name `conv1d`).

use super::{ConvOptions, Tensor};
use crate::error::{Error, Result};
use morok_core::shape::ShapeError;

/// Options of [`Tensor::conv1d`] (PyTorch's keyword arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv1dOptions {
    /// Distance between windows.
    pub stride: usize,
    /// Zeros added at both ends.
    pub padding: usize,
    /// Distance between window taps.
    pub dilation: usize,
    /// Channel groups.
    pub groups: usize,
}

impl Default for Conv1dOptions {
    fn default() -> Self {
        Conv1dOptions {
            stride: 1,
            padding: 0,
            dilation: 1,
            groups: 1,
        }
    }
}

impl Tensor {
    /// PyTorch's `conv1d(input [N, C, L], weight [O, C/groups, K], bias
    /// [O])`, giving `[N, O, (L + 2p - d(K-1) - 1) / s + 1]`.
    #[track_caller]
    pub fn conv1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: Conv1dOptions,
    ) -> Result<Tensor> {
        let op = "conv1d";
        let (xs, ws) = (self.graph()?.shape.clone(), weight.graph()?.shape.clone());
        let bs = match bias {
            Some(b) => Some(b.graph()?.shape.clone()),
            None => None,
        };
        let g = opts.groups;
        let fits = xs.len() == 3
            && ws.len() == 3
            && g > 0
            && ws[1].checked_mul(g) == Some(xs[1])
            && ws[0] % g == 0
            && bs.as_ref().is_none_or(|b| b.as_slice() == [ws[0]]);
        if !fits {
            return Err(Error::shape(ShapeError::new(
                op,
                &[&xs, &ws],
                format!(
                    "input [N, C, L], weight [O, C/{g}, K] and bias [O] do not fit \
                     {g} group(s)"
                ),
            )));
        }
        let reach = opts
            .dilation
            .checked_mul(ws[2].saturating_sub(1))
            .and_then(|r| r.checked_add(1));
        let len = opts
            .padding
            .checked_mul(2)
            .and_then(|p| p.checked_add(xs[2]));
        let ok = matches!((reach, len), (Some(r), Some(l)) if l >= r)
            && ws[2] > 0
            && opts.stride > 0
            && opts.dilation > 0;
        if !ok {
            return Err(Error::argument(
                op,
                format!("window {} ({opts:?}) does not fit input {xs:?}", ws[2]),
            ));
        }
        let x = self.unsqueeze_at(2)?;
        let w = weight.unsqueeze_at(2)?;
        let y = x.conv2d(
            &w,
            bias,
            ConvOptions {
                stride: (1, opts.stride),
                padding: (0, opts.padding),
                dilation: (1, opts.dilation),
                groups: g,
            },
        )?;
        let mut out = y.shape().to_vec();
        out.remove(2);
        y.reshape_to(&out)
    }
}

/// Options of [`Tensor::conv_transpose2d`] (PyTorch's keyword arguments,
/// `(height, width)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvTransposeOptions {
    /// The stride of the convolution this transposes.
    pub stride: (usize, usize),
    /// Its padding (removed from the output's borders).
    pub padding: (usize, usize),
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
            padding: (0, 0),
            output_padding: (0, 0),
            dilation: (1, 1),
            groups: 1,
        }
    }
}

impl Tensor {
    /// PyTorch's `conv_transpose2d(input [N, Cin, H, W], weight [Cin,
    /// Cout/groups, KH, KW], bias [Cout])`: the output is `(H - 1)·s - 2p +
    /// d·(K - 1) + output_padding + 1` high (and so wide). Computed as a
    /// stride-1 [`Tensor::conv2d`] of the input with `s - 1` zeros between
    /// elements, padded by `d·(K-1) - p` (cropped where negative), with
    /// the kernel flipped and its channel axes swapped per group.
    #[track_caller]
    pub fn conv_transpose2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: ConvTransposeOptions,
    ) -> Result<Tensor> {
        let op = "conv_transpose2d";
        let (xs, ws) = (self.graph()?.shape.clone(), weight.graph()?.shape.clone());
        let bs = match bias {
            Some(b) => Some(b.graph()?.shape.clone()),
            None => None,
        };
        let g = opts.groups;
        let fits = xs.len() == 4
            && ws.len() == 4
            && g > 0
            && ws[0] == xs[1]
            && xs[1] % g == 0
            && bs.as_ref().is_none_or(|b| b.as_slice() == [ws[1] * g]);
        if !fits {
            return Err(Error::shape(ShapeError::new(
                op,
                &[&xs, &ws],
                format!(
                    "input [N, Cin, H, W], weight [Cin, Cout/{g}, KH, KW] and bias [Cout] \
                     do not fit {g} group(s)"
                ),
            )));
        }
        let s = [opts.stride.0, opts.stride.1];
        let p = [opts.padding.0, opts.padding.1];
        let op_ = [opts.output_padding.0, opts.output_padding.1];
        let d = [opts.dilation.0, opts.dilation.1];
        let k = [ws[2], ws[3]];
        let mut pads = [(0isize, 0isize); 2];
        let mut out = [0usize; 2];
        for j in 0..2 {
            let i = xs[2 + j];
            // (i - 1)·s + d·(k - 1) + op + 1 - 2p, checked.
            let span = i
                .checked_sub(1)
                .and_then(|v| v.checked_mul(s[j]))
                .zip(d[j].checked_mul(k[j].saturating_sub(1)))
                .and_then(|(a, b)| a.checked_add(b)?.checked_add(op_[j] + 1));
            let ok = s[j] > 0
                && d[j] > 0
                && k[j] > 0
                && i > 0
                && op_[j] < s[j].max(d[j])
                && span.is_some_and(|v| v > 2 * p[j] && v < isize::MAX as usize / 4);
            if !ok {
                return Err(Error::argument(
                    op,
                    format!("{opts:?} with kernel {k:?} does not fit input {xs:?}"),
                ));
            }
            out[j] = span.unwrap_or(0) - 2 * p[j];
            let edge = (d[j] * (k[j] - 1)) as isize - p[j] as isize;
            pads[j] = (edge, edge + op_[j] as isize);
        }
        super::checked_numel(op, &[xs[0], ws[1] * g, out[0], out[1]])?;
        // Zeros between the input's elements: [.., H, 1, W, 1] padded to
        // [.., H, s0, W, s1], merged and cut to (H-1)·s0 + 1.
        let (n, c, h, w) = (xs[0], xs[1], xs[2], xs[3]);
        let spread = self
            .reshape_to(&[n, c, h, 1, w, 1])?
            .pad_to(
                op,
                &[(0, 0), (0, 0), (0, 0), (0, s[0] - 1), (0, 0), (0, s[1] - 1)],
            )?
            .reshape_to(&[n, c, h * s[0], w * s[1]])?
            .shrink_to(&[
                (0, n),
                (0, c),
                (0, (h - 1) * s[0] + 1),
                (0, (w - 1) * s[1] + 1),
            ])?;
        let padded = spread.try_pad(&[(0, 0), (0, 0), pads[0], pads[1]], 0u8)?;
        let (cin_g, cout_g) = (c / g, ws[1]);
        let kernel = weight
            .reshape_to(&[g, cin_g, cout_g, k[0], k[1]])?
            .permute_to(&[0, 2, 1, 3, 4])?
            .reshape_to(&[g * cout_g, cin_g, k[0], k[1]])?
            .flip_axes(&[2, 3])?;
        padded.conv2d(
            &kernel,
            bias,
            ConvOptions {
                stride: (1, 1),
                padding: (0, 0),
                dilation: opts.dilation,
                groups: g,
            },
        )
    }

    /// PyTorch's `conv_transpose1d` (`[N, Cin, L]`, weight `[Cin,
    /// Cout/groups, K]`): [`Tensor::conv_transpose2d`] over a height-1
    /// image; `opts` gives the length's stride, padding, output padding
    /// and dilation in its second components.
    #[track_caller]
    pub fn conv_transpose1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: ConvTransposeOptions,
    ) -> Result<Tensor> {
        let (xs, ws) = (self.graph()?.shape.clone(), weight.graph()?.shape.clone());
        if xs.len() != 3 || ws.len() != 3 {
            return Err(Error::shape(ShapeError::new(
                "conv_transpose1d",
                &[&xs, &ws],
                "input [N, Cin, L] and weight [Cin, Cout/groups, K] need 3 axes",
            )));
        }
        let flat = ConvTransposeOptions {
            stride: (1, opts.stride.1),
            padding: (0, opts.padding.1),
            output_padding: (0, opts.output_padding.1),
            dilation: (1, opts.dilation.1),
            groups: opts.groups,
        };
        let y = self
            .unsqueeze_at(2)?
            .conv_transpose2d(&weight.unsqueeze_at(2)?, bias, flat)?;
        let mut out = y.shape().to_vec();
        out.remove(2);
        y.reshape_to(&out)
    }
}
