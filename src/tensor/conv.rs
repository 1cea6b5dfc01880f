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
