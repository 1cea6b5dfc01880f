//! W11: one pre-norm transformer encoder layer (float32, batch 8,
//! sequence 512, width 512, 8 heads, MLP 4× with GELU, causal
//! self-attention), written with Morok's `Tensor` API:
//!
//! ```text
//! h = x + attention(layernorm1(x) Wqkv + bqkv) Wo + bo
//! y = h + gelu(layernorm2(h) W1 + b1) W2 + b2
//! ```
//!
//! Its inputs, its FLOP count (attention counted over the full L×L
//! scores, as the peers' script counts it) and a float64 check of whole
//! output rows. `peers/bench_block.py` builds the same inputs for
//! PyTorch, JAX and tinygrad.

use crate::workloads::{data, HostInput};
use morok::{AttentionOptions, Index, Tensor};

/// The layernorms' epsilon.
const EPS: f64 = 1e-5;

/// The block's sizes: batch, sequence, width and heads (the MLP is 4×
/// the width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockDims {
    /// Batch.
    pub batch: usize,
    /// Sequence length.
    pub seq: usize,
    /// Width (model dimension).
    pub width: usize,
    /// Attention heads.
    pub heads: usize,
}

impl BlockDims {
    /// The full size, or the `--quick` one.
    pub fn new(quick: bool) -> BlockDims {
        if quick {
            BlockDims {
                batch: 2,
                seq: 32,
                width: 128,
                heads: 2,
            }
        } else {
            BlockDims {
                batch: 8,
                seq: 512,
                width: 512,
                heads: 8,
            }
        }
    }

    /// The sizes of an input `x` of shape `[batch, seq, width]` (heads of
    /// 64 values).
    pub fn of(x: &[usize]) -> BlockDims {
        let at = |k: usize| x.get(k).copied().unwrap_or(1);
        BlockDims {
            batch: at(0),
            seq: at(1),
            width: at(2),
            heads: (at(2) / 64).max(1),
        }
    }

    fn hidden(self) -> usize {
        4 * self.width
    }

    /// Multiply-adds ×2 of the projections, the attention (full scores)
    /// and the MLP.
    pub fn flops(self) -> f64 {
        let (b, l, d, f) = (
            self.batch as f64,
            self.seq as f64,
            self.width as f64,
            self.hidden() as f64,
        );
        2.0 * b * l * d * 3.0 * d + 4.0 * b * l * l * d + 2.0 * b * l * d * d + 4.0 * b * l * d * f
    }

    /// x, layernorm 1 gain and bias, Wqkv, bqkv, Wo, bo, layernorm 2 gain
    /// and bias, W1, b1, W2, b2: xorshift values (seeds 1..) times a scale
    /// plus a shift (weights by `1/sqrt(fan-in)`, gains around 1).
    pub fn inputs(self) -> Vec<HostInput> {
        let (b, l, d, f) = (self.batch, self.seq, self.width, self.hidden());
        let (wd, wf) = (1.0 / (d as f32).sqrt(), 1.0 / (f as f32).sqrt());
        let specs: [(Vec<usize>, f32, f32); 13] = [
            (vec![b, l, d], 1.0, 0.0),
            (vec![d], 0.1, 1.0),
            (vec![d], 0.1, 0.0),
            (vec![d, 3 * d], wd, 0.0),
            (vec![3 * d], 0.1, 0.0),
            (vec![d, d], wd, 0.0),
            (vec![d], 0.1, 0.0),
            (vec![d], 0.1, 1.0),
            (vec![d], 0.1, 0.0),
            (vec![d, f], wd, 0.0),
            (vec![f], 0.1, 0.0),
            (vec![f, d], wf, 0.0),
            (vec![d], 0.1, 0.0),
        ];
        specs
            .into_iter()
            .enumerate()
            .map(|(k, (shape, scale, shift))| {
                let n = shape.iter().product();
                let v = data(n, k as u64 + 1)
                    .into_iter()
                    .map(|t| t * scale + shift)
                    .collect();
                (shape, v)
            })
            .collect()
    }

    /// The block over the uploaded inputs.
    pub fn graph(self, t: &[Tensor]) -> morok::Result<Tensor> {
        let (b, l, d, h) = (self.batch, self.seq, self.width, self.heads);
        let x = &t[0];
        let qkv = x
            .layernorm(&[-1], Some(&t[1]), Some(&t[2]), EPS)?
            .matmul(&t[3])?
            .add(&t[4])?
            .reshape(&[b as isize, l as isize, 3, h as isize, (d / h) as isize])?
            .permute(&[2, 0, 3, 1, 4])?;
        let part = |k: isize| qkv.index(&[Index::Int(k)]);
        let opts = AttentionOptions {
            is_causal: true,
            ..AttentionOptions::default()
        };
        let attended = part(0)?
            .scaled_dot_product_attention(&part(1)?, &part(2)?, &opts)?
            .permute(&[0, 2, 1, 3])?
            .reshape(&[b as isize, l as isize, d as isize])?;
        let h1 = x.add(&attended.matmul(&t[5])?.add(&t[6])?)?;
        let mlp = h1
            .layernorm(&[-1], Some(&t[7]), Some(&t[8]), EPS)?
            .matmul(&t[9])?
            .add(&t[10])?
            .gelu()?
            .matmul(&t[11])?
            .add(&t[12])?;
        h1.add(&mlp)
    }

    /// The output rows checked: the first and last position of the first
    /// sequence, the middle and last of the last one.
    fn checked_rows(self) -> [(usize, usize); 4] {
        let (b, l) = (self.batch, self.seq);
        [(0, 0), (0, l - 1), (b - 1, l / 2), (b - 1, l - 1)]
    }

    /// Checks whole output rows against a float64 evaluation: each value
    /// within 1e-3 of the row's largest magnitude (at least 1).
    pub fn check(self, inputs: &[HostInput], out: &[f32]) -> Result<(), String> {
        let (b, l, d) = (self.batch, self.seq, self.width);
        if out.len() != b * l * d {
            return Err(format!(
                "W11: {} output elements, expected {}",
                out.len(),
                b * l * d
            ));
        }
        for (bi, li) in self.checked_rows() {
            let want = self.reference_row(inputs, bi, li);
            let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let got = &out[(bi * l + li) * d..(bi * l + li + 1) * d];
            for (c, (&g, &w)) in got.iter().zip(&want).enumerate() {
                if (g as f64 - w).abs() > 1e-3 * scale {
                    return Err(format!(
                        "W11: output [{bi}, {li}, {c}] is {g}, the float64 reference gives {w}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Output row `(bi, li)` in float64.
    fn reference_row(self, inputs: &[HostInput], bi: usize, li: usize) -> Vec<f64> {
        let (l, d, heads, f) = (self.seq, self.width, self.heads, self.hidden());
        let dh = d / heads;
        let v = |k: usize| -> Vec<f64> { inputs[k].1.iter().map(|&t| t as f64).collect() };
        let x = &inputs[0].1[bi * l * d..(bi + 1) * l * d];
        let (g1, c1, wqkv, bqkv) = (v(1), v(2), v(3), v(4));
        let (wo, bo, g2, c2) = (v(5), v(6), v(7), v(8));
        let (w1, b1, w2, b2) = (v(9), v(10), v(11), v(12));
        // q, k, v of positions 0..=li.
        let qkv: Vec<Vec<f64>> = (0..=li)
            .map(|p| {
                let row: Vec<f64> = x[p * d..(p + 1) * d].iter().map(|&t| t as f64).collect();
                matvec(&layernorm64(&row, &g1, &c1), &wqkv, &bqkv)
            })
            .collect();
        let mut attended = vec![0.0; d];
        for h in 0..heads {
            let q = &qkv[li][h * dh..(h + 1) * dh];
            let scores: Vec<f64> = qkv
                .iter()
                .map(|r| {
                    let k = &r[d + h * dh..d + (h + 1) * dh];
                    q.iter().zip(k).map(|(a, b)| a * b).sum::<f64>() / (dh as f64).sqrt()
                })
                .collect();
            let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
            let total: f64 = e.iter().sum();
            for (r, w) in qkv.iter().zip(&e) {
                for j in 0..dh {
                    attended[h * dh + j] += w / total * r[2 * d + h * dh + j];
                }
            }
        }
        let proj = matvec(&attended, &wo, &bo);
        let h1: Vec<f64> = x[li * d..(li + 1) * d]
            .iter()
            .zip(&proj)
            .map(|(&a, b)| a as f64 + b)
            .collect();
        let z = matvec(&layernorm64(&h1, &g2, &c2), &w1, &b1);
        let act: Vec<f64> = z
            .iter()
            .map(|&t| 0.5 * t * (1.0 + erf(t / std::f64::consts::SQRT_2)))
            .collect();
        debug_assert_eq!(act.len(), f);
        let out = matvec(&act, &w2, &b2);
        h1.iter().zip(&out).map(|(a, b)| a + b).collect()
    }
}

/// `row · W + b` for a row-major `W` of `row.len()` rows.
fn matvec(row: &[f64], w: &[f64], b: &[f64]) -> Vec<f64> {
    let cols = b.len();
    let mut out = b.to_vec();
    for (k, &r) in row.iter().enumerate() {
        for (o, &wv) in out.iter_mut().zip(&w[k * cols..(k + 1) * cols]) {
            *o += r * wv;
        }
    }
    out
}

/// Layernorm of one row with gain `g` and bias `c`.
fn layernorm64(row: &[f64], g: &[f64], c: &[f64]) -> Vec<f64> {
    let n = row.len() as f64;
    let mean = row.iter().sum::<f64>() / n;
    let var = row.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / n;
    let inv = 1.0 / (var + EPS).sqrt();
    row.iter()
        .zip(g.iter().zip(c))
        .map(|(t, (g, c))| (t - mean) * inv * g + c)
        .collect()
}

/// `erf` to about 1e-7 (Abramowitz and Stegun 7.1.26), ample for the
/// check's 1e-3.
fn erf(x: f64) -> f64 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    (1.0 - poly * (-a * a).exp()).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [(0.0, 0.0), (0.5, 0.520_499_877_8), (-1.0, -0.842_700_792_9)] {
            assert!((erf(x) - want).abs() < 1e-6, "erf({x})");
        }
    }
}
