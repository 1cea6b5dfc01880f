//! The float32 workloads W1–W11, written with Morok's `Tensor` API
//! (W8 and W9 are training steps: forward, cross-entropy, backward and an
//! SGD or Adam update of the parameters, in place; W10, ONNX models run
//! through `morok-onnx`, is in `onnx_models.rs`; W11, a transformer
//! encoder layer, is in `block.rs`), their work counts (the same rate definitions as the peers'
//! scripts: FLOPs for compute-bound workloads, compulsory bytes for
//! memory-bound ones) and a sampled float64 check of Morok's results.
//!
//! Inputs are deterministic xorshift values in [-1, 1), the generator the
//! Rust peers use; `--quick` shrinks every size so the whole set runs in a
//! few seconds (a smoke test).

use crate::block::BlockDims;
use crate::onnx_models::{self, Net};
use morok::optim::{Adam, AdamOptions, Optimizer, Sgd, SgdOptions};
use morok::{ConvOptions, DType, Tensor};

/// One input on the host: its shape and its row-major values.
pub type HostInput = (Vec<usize>, Vec<f32>);

/// Every workload, in the order the table lists them.
pub const ALL: [Workload; 17] = [
    Workload::new("W1", "relu(a*b+c)", Kind::Elementwise),
    Workload::new("W2a", "row sum", Kind::RowSum),
    Workload::new("W2b", "column sum", Kind::ColSum),
    Workload::new("W2c", "full sum", Kind::FullSum),
    Workload::new("W3", "softmax, last axis", Kind::Softmax),
    Workload::new("W4a", "matmul", Kind::Matmul(1024)),
    Workload::new("W4b", "matmul", Kind::Matmul(2048)),
    Workload::new("W5a", "MLP 784-128-10", Kind::Mlp(64)),
    Workload::new("W5b", "MLP 784-128-10", Kind::Mlp(1024)),
    Workload::new("W6", "conv2d 3x3, pad 1", Kind::Conv),
    Workload::new("W7", "layernorm, last axis", Kind::LayerNorm),
    Workload::new(
        "W8",
        "MLP 784-128-10 training step, SGD",
        Kind::Train(Update::Sgd),
    ),
    Workload::new(
        "W9",
        "MLP 784-128-10 training step, Adam",
        Kind::Train(Update::Adam),
    ),
    Workload::new("W10a", Net::ResNet50.what(), Kind::Onnx(Net::ResNet50, 1)),
    Workload::new("W10b", Net::ResNet50.what(), Kind::Onnx(Net::ResNet50, 8)),
    Workload::new("W10c", Net::Encoder.what(), Kind::Onnx(Net::Encoder, 8)),
    Workload::new("W11", "pre-norm encoder layer, causal", Kind::Block),
];

/// The parameter update of a training workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// SGD, learning rate 0.01.
    Sgd,
    /// Adam, learning rate 0.001, PyTorch's other defaults.
    Adam,
}

/// What a workload computes; the argument is its full-size parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `relu(a * b + c)` over three n×n tensors.
    Elementwise,
    /// `x.sum(axis 1)` of an n×n tensor.
    RowSum,
    /// `x.sum(axis 0)` of an n×n tensor.
    ColSum,
    /// `x.sum()` of an n×n tensor.
    FullSum,
    /// `softmax(x, -1)` of an n×n tensor.
    Softmax,
    /// An n×n by n×n matrix product.
    Matmul(usize),
    /// `softmax(relu(x @ w1 + b1) @ w2 + b2)`, 784→128→10, for a batch.
    Mlp(usize),
    /// 3×3 convolution with padding 1, NCHW, no bias.
    Conv,
    /// `layernorm(x, -1) * g + b`, eps 1e-5.
    LayerNorm,
    /// One training step of the W5 MLP at batch 128: forward,
    /// cross-entropy against integer labels, gradients, and the update of
    /// the four parameters (and the optimizer's state) in place.
    Train(Update),
    /// A pre-norm transformer encoder layer ([`BlockDims`]).
    Block,
    /// An ONNX model at a batch size (full size even with `--quick`).
    Onnx(Net, usize),
}

/// What a workload's rate is counted in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Work {
    /// Floating-point operations (rate in GFLOP/s).
    Flops(f64),
    /// Compulsory memory traffic in bytes (rate in GB/s).
    Bytes(f64),
}

impl Work {
    /// The rate reached in `ms` milliseconds, with its unit.
    pub fn rate(self, ms: f64) -> (f64, &'static str) {
        match self {
            Work::Flops(f) => (f / (ms * 1e-3) / 1e9, "GFLOP/s"),
            Work::Bytes(b) => (b / (ms * 1e-3) / 1e9, "GB/s"),
        }
    }
}

/// Which of the machine's limits bounds a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Read-only streaming (the reductions).
    Read,
    /// One read and one write stream (softmax, layernorm).
    Copy,
    /// Several reads and one write (the elementwise workload).
    Triad,
    /// The FMA units.
    Fma,
}

/// One workload of the table.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// Short id (`W1`, `W2a`, ...), the prefix of the peers' workload names.
    pub id: &'static str,
    /// What it computes, without the size.
    pub what: &'static str,
    /// The computation.
    pub kind: Kind,
}

/// The sizes one run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Side of the square tensors of W1–W3.
    pub square: usize,
    /// Side of the matrices of W4.
    pub matmul: usize,
    /// MLP batch.
    pub batch: usize,
    /// Convolution (batch, channels in = out, height = width).
    pub conv: (usize, usize, usize),
    /// Layernorm (rows, columns).
    pub norm: (usize, usize),
}

const MLP_IN: usize = 784;
const MLP_HIDDEN: usize = 128;
const MLP_OUT: usize = 10;
const LN_EPS: f64 = 1e-5;
const TRAIN_BATCH: usize = 128;

impl Workload {
    const fn new(id: &'static str, what: &'static str, kind: Kind) -> Workload {
        Workload { id, what, kind }
    }

    /// The sizes of this workload, full or shrunk for `--quick`.
    pub fn dims(&self, quick: bool) -> Dims {
        let (matmul, batch) = match (self.kind, quick) {
            (Kind::Matmul(n), false) => (n, 0),
            (Kind::Matmul(n), true) => (n / 32, 0),
            (Kind::Mlp(b), false) => (0, b),
            (Kind::Mlp(b), true) => (0, b / 16),
            (Kind::Train(_), false) => (0, TRAIN_BATCH),
            (Kind::Train(_), true) => (0, TRAIN_BATCH / 16),
            _ => (0, 0),
        };
        let (square, conv, norm) = if quick {
            (64, (1, 4, 8), (16, 32))
        } else {
            (4096, (8, 64, 56), (4096, 1024))
        };
        Dims {
            square,
            matmul,
            batch,
            conv,
            norm,
        }
    }

    /// The workload with its size, e.g. `matmul 1024³`.
    pub fn label(&self, quick: bool) -> String {
        let d = self.dims(quick);
        let size = match self.kind {
            Kind::Elementwise | Kind::RowSum | Kind::ColSum | Kind::FullSum | Kind::Softmax => {
                format!("{}²", d.square)
            }
            Kind::Matmul(_) => format!("{}³", d.matmul),
            Kind::Mlp(_) | Kind::Train(_) => format!("batch {}", d.batch),
            Kind::Conv => format!("b{} {}→{} {}²", d.conv.0, d.conv.1, d.conv.1, d.conv.2),
            Kind::LayerNorm => format!("{}×{}", d.norm.0, d.norm.1),
            Kind::Block => {
                let b = BlockDims::new(quick);
                format!("b{} l{} d{} h{}", b.batch, b.seq, b.width, b.heads)
            }
            Kind::Onnx(_, batch) => format!("batch {batch}"),
        };
        format!("{} {} {}", self.id, self.what, size)
    }

    /// The work of one call, counted as the peers' scripts count it.
    pub fn work(&self, quick: bool) -> Work {
        let d = self.dims(quick);
        let sq = (d.square * d.square) as f64;
        let f32b = 4.0;
        match self.kind {
            Kind::Elementwise => Work::Bytes(4.0 * sq * f32b),
            Kind::RowSum | Kind::ColSum => Work::Bytes((sq + d.square as f64) * f32b),
            Kind::FullSum => Work::Bytes(sq * f32b),
            Kind::Softmax => Work::Bytes(2.0 * sq * f32b),
            Kind::Matmul(_) => Work::Flops(2.0 * (d.matmul as f64).powi(3)),
            Kind::Mlp(_) => {
                Work::Flops(2.0 * (d.batch * (MLP_IN * MLP_HIDDEN + MLP_HIDDEN * MLP_OUT)) as f64)
            }
            // The forward products and, backward, the two products of
            // each layer's gradients (input and weight).
            Kind::Train(_) => {
                Work::Flops(6.0 * (d.batch * (MLP_IN * MLP_HIDDEN + MLP_HIDDEN * MLP_OUT)) as f64)
            }
            Kind::Conv => {
                let (b, c, hw) = d.conv;
                Work::Flops(2.0 * (b * c * c * 9 * hw * hw) as f64)
            }
            Kind::LayerNorm => Work::Bytes(2.0 * (d.norm.0 * d.norm.1) as f64 * f32b),
            Kind::Block => Work::Flops(BlockDims::new(quick).flops()),
            Kind::Onnx(net, batch) => net.work(batch),
        }
    }

    /// The machine limit this workload is compared with.
    pub fn bound(&self) -> Bound {
        match self.kind {
            Kind::Elementwise => Bound::Triad,
            Kind::RowSum | Kind::ColSum | Kind::FullSum => Bound::Read,
            Kind::Softmax | Kind::LayerNorm => Bound::Copy,
            Kind::Matmul(_)
            | Kind::Mlp(_)
            | Kind::Conv
            | Kind::Train(_)
            | Kind::Block
            | Kind::Onnx(..) => Bound::Fma,
        }
    }

    /// The host inputs (shape, values) of this workload (W10's: read from
    /// the exported files).
    pub fn inputs(&self, quick: bool) -> Result<Vec<HostInput>, String> {
        if let Kind::Onnx(net, batch) = self.kind {
            return Ok(vec![onnx_models::input(self.id, net, batch)?]);
        }
        Ok(self.generated_inputs(quick))
    }

    fn generated_inputs(&self, quick: bool) -> Vec<HostInput> {
        let d = self.dims(quick);
        let sq = vec![d.square, d.square];
        let scaled = |shape: Vec<usize>, seed: u64, scale: f32, offset: f32| {
            let n = shape.iter().product();
            let v = data(n, seed)
                .into_iter()
                .map(|x| x * scale + offset)
                .collect();
            (shape, v)
        };
        match self.kind {
            Kind::Block => BlockDims::new(quick).inputs(),
            Kind::Onnx(..) => Vec::new(),
            Kind::Elementwise => (1..=3).map(|s| scaled(sq.clone(), s, 1.0, 0.0)).collect(),
            Kind::RowSum | Kind::ColSum | Kind::FullSum | Kind::Softmax => {
                vec![scaled(sq, 1, 1.0, 0.0)]
            }
            Kind::Matmul(_) => {
                let m = vec![d.matmul, d.matmul];
                vec![scaled(m.clone(), 4, 1.0, 0.0), scaled(m, 5, 1.0, 0.0)]
            }
            // The batch, then the four parameters (shared by W5 and W8/W9).
            Kind::Mlp(_) | Kind::Train(_) => {
                let batch_seed = if matches!(self.kind, Kind::Mlp(_)) {
                    10
                } else {
                    16
                };
                let mut v = vec![
                    scaled(vec![d.batch, MLP_IN], batch_seed, 1.0, 0.0),
                    scaled(vec![MLP_IN, MLP_HIDDEN], 6, 0.05, 0.0),
                    scaled(vec![MLP_HIDDEN], 7, 0.1, 0.0),
                    scaled(vec![MLP_HIDDEN, MLP_OUT], 8, 0.1, 0.0),
                    scaled(vec![MLP_OUT], 9, 0.1, 0.0),
                ];
                if matches!(self.kind, Kind::Train(_)) {
                    // The labels, as floats (cast once in `session`).
                    let labels = (0..d.batch).map(|i| ((i * 7 + 3) % MLP_OUT) as f32);
                    v.push((vec![d.batch], labels.collect()));
                }
                v
            }
            Kind::Conv => {
                let (b, c, hw) = d.conv;
                vec![
                    scaled(vec![b, c, hw, hw], 14, 1.0, 0.0),
                    scaled(vec![c, c, 3, 3], 15, 0.05, 0.0),
                ]
            }
            Kind::LayerNorm => {
                let (r, c) = d.norm;
                vec![
                    scaled(vec![r, c], 11, 1.0, 0.0),
                    scaled(vec![c], 12, 0.1, 1.0),
                    scaled(vec![c], 13, 0.1, 0.0),
                ]
            }
        }
    }

    /// A session over the uploaded inputs: for the training workloads,
    /// the labels as integers and the optimizer of the four parameters.
    pub fn session(&self, tensors: Vec<Tensor>) -> Result<Session, String> {
        if let Kind::Onnx(net, _) = self.kind {
            let path = onnx_models::models_dir().join(net.file());
            let model = morok_onnx::Model::load(&path)
                .map_err(|e| format!("loading {}: {e}", path.display()))?;
            return Ok(Session {
                tensors,
                training: None,
                onnx: Some(model),
            });
        }
        let Kind::Train(update) = self.kind else {
            return Ok(Session {
                tensors,
                training: None,
                onnx: None,
            });
        };
        self.training_session(tensors, update)
            .map_err(|e| e.to_string())
    }

    fn training_session(&self, tensors: Vec<Tensor>, update: Update) -> morok::Result<Session> {
        let labels = tensors[5].cast(DType::I32)?.realize()?;
        let params = &tensors[1..5];
        let opt: Box<dyn Optimizer> = match update {
            Update::Sgd => Box::new(Sgd::new(
                params,
                SgdOptions {
                    lr: 0.01,
                    ..SgdOptions::default()
                },
            )?),
            Update::Adam => Box::new(Adam::new(params, AdamOptions::default())?),
        };
        Ok(Session {
            tensors,
            training: Some((labels, opt)),
            onnx: None,
        })
    }

    /// One call, as user code makes it: build the lazy graph over the
    /// session's tensors and realize it (a training step: realize its loss
    /// together with the parameter update). The first call compiles; later
    /// ones hit the caches.
    /// On a GPU (`MOROK_DEVICE=CUDA`) the call waits for the device, so
    /// that its time is its kernels' time, not their queueing.
    pub fn call(&self, s: &mut Session) -> Result<Tensor, String> {
        let out = self.call_queued(s)?;
        if let Some(device) = queueing_device() {
            device.synchronize().map_err(|e| e.to_string())?;
        }
        Ok(out)
    }

    /// [`Workload::call`] without the wait.
    fn call_queued(&self, s: &mut Session) -> Result<Tensor, String> {
        if let Some(model) = &s.onnx {
            // The model's one output, realized through its plan cache, as
            // an `onnx!` struct's `forward` runs it.
            let outs = model
                .call(&[("x", &s.tensors[0])])
                .map_err(|e| e.to_string())?;
            return outs
                .into_iter()
                .next()
                .ok_or("the model has no output".into());
        }
        let out = match &mut s.training {
            Some((labels, opt)) => mlp_logits(&s.tensors)
                .and_then(|l| l.cross_entropy(labels))
                .and_then(|loss| opt.minimize(&loss)),
            None => self.graph(&s.tensors).and_then(|g| g.realize()),
        };
        out.map_err(|e| e.to_string())
    }

    /// The lazy graph of one call over the uploaded inputs (the training
    /// workloads: the forward pass's class probabilities).
    fn graph(&self, t: &[Tensor]) -> morok::Result<Tensor> {
        match self.kind {
            Kind::Elementwise => t[0].mul(&t[1])?.add(&t[2])?.relu(),
            Kind::RowSum => t[0].sum(Some(&[1]), false),
            Kind::ColSum => t[0].sum(Some(&[0]), false),
            Kind::FullSum => t[0].sum(None, false),
            Kind::Softmax => t[0].softmax(-1),
            Kind::Matmul(_) => t[0].matmul(&t[1]),
            Kind::Mlp(_) | Kind::Train(_) => mlp_logits(t)?.softmax(-1),
            Kind::Conv => {
                let opts = ConvOptions {
                    padding: (1, 1).into(),
                    ..ConvOptions::default()
                };
                t[0].conv2d(&t[1], None, opts)
            }
            Kind::LayerNorm => t[0].layernorm(&[-1], Some(&t[1]), Some(&t[2]), LN_EPS),
            Kind::Block => BlockDims::of(t[0].shape()).graph(t),
            Kind::Onnx(..) => Err(morok::Error::runtime(
                "W10",
                "an ONNX workload runs through its model, not a graph",
            )),
        }
    }

    /// Checks up to 48 output elements spread over `out` against a float64
    /// evaluation of the same formula. The tolerance is 1e-5 of the sum of
    /// the magnitudes of the terms behind each value (so long float32
    /// reductions pass and a wrong index does not), 1e-3 relative for
    /// softmax and layernorm outputs.
    pub fn check(&self, inputs: &[HostInput], out: &[f32]) -> Result<(), String> {
        if self.kind == Kind::Block {
            return BlockDims::of(&inputs[0].0).check(inputs, out);
        }
        if let Kind::Onnx(..) = self.kind {
            return onnx_models::check(self.id, out);
        }
        let expected_len = self.output_len(inputs);
        if out.len() != expected_len {
            return Err(format!(
                "{}: {} output elements, expected {expected_len}",
                self.id,
                out.len()
            ));
        }
        let samples = 48.min(out.len());
        for s in 0..samples {
            let i = if samples == 1 {
                0
            } else {
                s * (out.len() - 1) / (samples - 1)
            };
            let (want, scale) = self.reference_at(inputs, i);
            let tol = 1e-5 * scale + 1e-7;
            if !((out[i] as f64) - want).abs().le(&tol) {
                return Err(format!(
                    "{}: element {i} is {}, the float64 reference gives {want}",
                    self.id, out[i]
                ));
            }
        }
        Ok(())
    }

    fn output_len(&self, inputs: &[HostInput]) -> usize {
        let s = &inputs[0].0;
        match self.kind {
            Kind::RowSum | Kind::ColSum => s[0],
            Kind::FullSum => 1,
            Kind::Mlp(_) => s[0] * MLP_OUT,
            Kind::Train(_) => 1,
            Kind::Conv => s[0] * inputs[1].0[0] * s[2] * s[3],
            _ => inputs[0].1.len(),
        }
    }

    /// The float64 value of output element `i` and the sum of the
    /// magnitudes of the terms behind it.
    fn reference_at(&self, inputs: &[HostInput], i: usize) -> (f64, f64) {
        let v = |k: usize| -> &[f32] { &inputs[k].1 };
        let cols = inputs[0].0.last().copied().unwrap_or(1);
        let x = v(0);
        let sum_abs = |it: &mut dyn Iterator<Item = f64>| {
            it.fold((0.0, 0.0), |(s, a), t| (s + t, a + t.abs()))
        };
        match self.kind {
            Kind::Elementwise => {
                let (a, b, c) = (x[i] as f64, v(1)[i] as f64, v(2)[i] as f64);
                ((a * b + c).max(0.0), (a * b).abs() + c.abs())
            }
            Kind::RowSum => sum_abs(&mut x[i * cols..(i + 1) * cols].iter().map(|&t| t as f64)),
            Kind::ColSum => {
                let rows = inputs[0].0[0];
                sum_abs(&mut (0..rows).map(|r| x[r * cols + i] as f64))
            }
            Kind::FullSum => sum_abs(&mut x.iter().map(|&t| t as f64)),
            Kind::Softmax => {
                let row = &x[(i / cols) * cols..(i / cols + 1) * cols];
                let probs = softmax64(&row.iter().map(|&t| t as f64).collect::<Vec<_>>());
                (probs[i % cols], 100.0 * probs[i % cols])
            }
            Kind::Matmul(_) => {
                let (r, c) = (i / cols, i % cols);
                sum_abs(&mut (0..cols).map(|k| x[r * cols + k] as f64 * v(1)[k * cols + c] as f64))
            }
            Kind::Mlp(_) => {
                let p = softmax64(&mlp_logits64(inputs, i / MLP_OUT))[i % MLP_OUT];
                (p, 100.0 * p)
            }
            // Checked as a whole (`check`).
            Kind::Block | Kind::Onnx(..) => (f64::NAN, 0.0),
            // The loss before the first update: the mean over the batch of
            // -log softmax(logits)[label].
            Kind::Train(_) => {
                let rows = inputs[0].0[0];
                let losses: Vec<f64> = (0..rows)
                    .map(|r| -softmax64(&mlp_logits64(inputs, r))[v(5)[r] as usize].ln())
                    .collect();
                let mean = losses.iter().sum::<f64>() / rows as f64;
                (mean, 10.0 * mean.abs().max(1.0))
            }
            Kind::Conv => {
                let [_, c, h, w] = inputs[0].0[..] else {
                    return (f64::NAN, 0.0);
                };
                let co = inputs[1].0[0];
                let (n, o, y, xx) = (i / (co * h * w), (i / (h * w)) % co, (i / w) % h, i % w);
                let mut terms = Vec::with_capacity(c * 9);
                for ci in 0..c {
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let (sy, sx) = ((y + ky) as isize - 1, (xx + kx) as isize - 1);
                            if sy < 0 || sx < 0 || sy >= h as isize || sx >= w as isize {
                                continue;
                            }
                            let xi = ((n * c + ci) * h + sy as usize) * w + sx as usize;
                            let wi = ((o * c + ci) * 3 + ky) * 3 + kx;
                            terms.push(x[xi] as f64 * v(1)[wi] as f64);
                        }
                    }
                }
                sum_abs(&mut terms.into_iter())
            }
            Kind::LayerNorm => {
                let row: Vec<f64> = x[(i / cols) * cols..(i / cols + 1) * cols]
                    .iter()
                    .map(|&t| t as f64)
                    .collect();
                let mean = row.iter().sum::<f64>() / cols as f64;
                let var = row.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / cols as f64;
                let c = i % cols;
                let y = (row[c] - mean) / (var + LN_EPS).sqrt() * v(1)[c] as f64 + v(2)[c] as f64;
                (y, 100.0 * y.abs().max(1.0))
            }
        }
    }
}

/// The W5 MLP's logits over the uploaded inputs (x, w1, b1, w2, b2).
fn mlp_logits(t: &[Tensor]) -> morok::Result<Tensor> {
    t[0].matmul(&t[1])?
        .add(&t[2])?
        .relu()?
        .matmul(&t[3])?
        .add(&t[4])
}

/// The logits of row `r` of the MLP's batch, in float64.
fn mlp_logits64(inputs: &[HostInput], r: usize) -> Vec<f64> {
    let v = |k: usize| -> &[f32] { &inputs[k].1 };
    let xr = &v(0)[r * MLP_IN..(r + 1) * MLP_IN];
    let hidden: Vec<f64> = (0..MLP_HIDDEN)
        .map(|h| {
            let dot: f64 = (0..MLP_IN)
                .map(|k| xr[k] as f64 * v(1)[k * MLP_HIDDEN + h] as f64)
                .sum();
            (dot + v(2)[h] as f64).max(0.0)
        })
        .collect();
    (0..MLP_OUT)
        .map(|o| {
            let dot: f64 = (0..MLP_HIDDEN)
                .map(|h| hidden[h] * v(3)[h * MLP_OUT + o] as f64)
                .sum();
            dot + v(4)[o] as f64
        })
        .collect()
}

/// A workload's uploaded inputs and, for a training workload, its labels
/// and the optimizer that updates the parameters among the inputs from
/// call to call.
pub struct Session {
    /// The uploaded inputs, in [`Workload::inputs`] order.
    pub tensors: Vec<Tensor>,
    training: Option<(Tensor, Box<dyn Optimizer>)>,
    /// W10's model.
    onnx: Option<morok_onnx::Model>,
}

fn softmax64(row: &[f64]) -> Vec<f64> {
    let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = row.iter().map(|t| (t - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|t| t / s).collect()
}

/// Deterministic pseudo-random values in [-1, 1) (xorshift64), the
/// sequence the Rust peers use.
pub fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// The workloads whose id starts with one of the comma-separated
/// `filters` (all when empty), e.g. `W2` selects W2a, W2b and W2c.
pub fn select(filters: &[String]) -> Result<Vec<Workload>, String> {
    for f in filters {
        if !ALL.iter().any(|w| selects(f, w.id)) {
            let ids: Vec<&str> = ALL.iter().map(|w| w.id).collect();
            return Err(format!(
                "no workload matches `{f}` (known: {})",
                ids.join(", ")
            ));
        }
    }
    Ok(ALL
        .iter()
        .filter(|w| filters.is_empty() || filters.iter().any(|f| selects(f, w.id)))
        .copied()
        .collect())
}

/// A workload's family: its id without the variant letter (`W2a` →
/// `W2`, `W11` → `W11`).
pub fn family(id: &str) -> &str {
    id.trim_end_matches(|c: char| c.is_ascii_lowercase())
}

/// Whether the filter `f` selects the workload `id`: the id itself, or
/// its family (`W2` selects `W2a`, `W2b` and `W2c`; `W1` never selects
/// `W11`).
pub fn selects(f: &str, id: &str) -> bool {
    f == id || f == family(id)
}

/// The default device when it queues its launches (a GPU), once per
/// process; `None` on the CPU devices, whose calls return finished.
fn queueing_device() -> Option<&'static morok::Device> {
    static DEVICE: std::sync::OnceLock<Option<morok::Device>> = std::sync::OnceLock::new();
    DEVICE
        .get_or_init(|| {
            morok::Device::default_device()
                .ok()
                .filter(|d| d.name().starts_with("CUDA"))
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_select_ids_and_families_not_prefixes() {
        assert!(selects("W1", "W1"));
        assert!(!selects("W1", "W11"));
        assert!(!selects("W1", "W10a"));
        assert!(selects("W10", "W10b"));
        assert!(selects("W2", "W2a"));
        assert!(selects("W2b", "W2b"));
        assert!(!selects("W2b", "W2a"));
        assert_eq!(family("W11"), "W11");
        assert_eq!(family("W4b"), "W4");
        let picked: Vec<&str> = select(&["W2".to_string(), "W7".to_string()])
            .unwrap()
            .iter()
            .map(|w| w.id)
            .collect();
        assert_eq!(picked, ["W2a", "W2b", "W2c", "W7"]);
        assert!(select(&["W".to_string()]).is_err());
    }

    /// The sampled check passes on values the reference formula itself
    /// produced and fails when one output is off.
    #[test]
    fn check_catches_a_wrong_element() {
        let w = ALL[1];
        let inputs = w.inputs(true).unwrap();
        let mut out: Vec<f32> = (0..64)
            .map(|i| w.reference_at(&inputs, i).0 as f32)
            .collect();
        assert!(w.check(&inputs, &out).is_ok());
        out[63] += 1.0;
        assert!(w.check(&inputs, &out).is_err());
    }

    #[test]
    fn filters_select_by_prefix() {
        let ids: Vec<&str> = select(&["W2".into(), "W7".into()])
            .unwrap()
            .iter()
            .map(|w| w.id)
            .collect();
        assert_eq!(ids, ["W2a", "W2b", "W2c", "W7"]);
        assert!(select(&["W12".into()]).is_err());
    }
}
