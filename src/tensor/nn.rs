//! Neural-network ops: activations, softmax, layer norm and the
//! cross-entropy loss (convolutions are in `conv`, pooling in `pooling`).
//!
//! `cross_entropy` picks each row's log-probability with a one-hot mask
//! (labels compared with `arange`) and averages the negatives.

use super::Tensor;
use crate::error::{Error, Located, Result};
use morok_core::shape::{broadcast_shapes, cross_entropy_shape, ShapeError};
use morok_core::uop::{Op, ReduceOp};
use morok_core::ScalarType;

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

    /// Mean cross-entropy of `self` (logits with the classes on axis 1,
    /// PyTorch's `[N, C, d1, ...]`; axis 0 of a 1-D input) against integer
    /// class labels of the logits' shape without the class axis. A label
    /// outside `0..C` selects nothing and contributes 0. For PyTorch's
    /// other options, see [`Tensor::cross_entropy_with`].
    #[track_caller]
    pub fn cross_entropy(&self, labels: &Tensor) -> Result<Tensor> {
        let (ls, ts) = (self.graph()?.shape.clone(), labels.graph()?.shape.clone());
        let label_type = labels.graph()?.dtype;
        if !label_type.is_int() {
            return Err(Error::dtype(
                "cross_entropy",
                format!(
                    "the label tensor {} has dtype {label_type}, not an integer type",
                    morok_core::shape::shape_text(&ts)
                ),
            ));
        }
        cross_entropy_shape(&ls, &ts).located()?;
        let class_axis = usize::from(ls.len() >= 2);
        // Classes last: `[N, d1, ..., C]` (a no-op for 1-D and 2-D).
        let mut perm: Vec<isize> = (0..ls.len() as isize)
            .filter(|&a| a != class_axis as isize)
            .collect();
        perm.push(class_axis as isize);
        let logits = self.permute(&perm)?;
        let logp = logits.log_softmax(-1)?;
        let classes = ls[class_axis];
        let ids = Tensor::counting("cross_entropy", classes, ScalarType::I32)?;
        let onehot = labels.unsqueeze(-1)?.eq(&ids)?;
        let picked = onehot.where_(&logp, 0.0)?.sum(Some(&[-1]), false)?;
        picked.neg()?.mean(None, false)
    }
}
