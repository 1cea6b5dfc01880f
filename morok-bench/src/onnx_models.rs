//! W10: ONNX models imported with `morok-onnx` and run as a user runs
//! them (`Model::run`, then realize), against ONNX Runtime.
//!
//! The models are not in the repository (ResNet-50's weights alone are
//! 100 MB): `peers/export_models.py` writes them with PyTorch into
//! [`models_dir`], once, with each workload's input and PyTorch's output.
//! Morok reads the same input file and its first output is checked
//! against PyTorch's; the ONNX Runtime peer (`peers/bench_onnx.py`) reads
//! the same files.

use crate::workloads::{HostInput, Work};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A W10 network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Net {
    /// ResNet-50 (bottleneck stages 3-4-6-3, 224×224 RGB, 1000 classes).
    ResNet50,
    /// `nn.TransformerEncoder`: 4 layers, width 256, 4 heads, feed-forward
    /// 1024, sequence 128.
    Encoder,
}

/// The encoder's sequence length, width, feed-forward width and layers.
const ENC: (usize, usize, usize, usize) = (128, 256, 1024, 4);

impl Net {
    /// The model file in [`models_dir`].
    pub fn file(self) -> &'static str {
        match self {
            Net::ResNet50 => "resnet50.onnx",
            Net::Encoder => "encoder.onnx",
        }
    }

    /// The input's shape at `batch`.
    pub fn input_shape(self, batch: usize) -> Vec<usize> {
        match self {
            Net::ResNet50 => vec![batch, 3, 224, 224],
            Net::Encoder => vec![batch, ENC.0, ENC.1],
        }
    }

    /// What the table calls it.
    pub const fn what(self) -> &'static str {
        match self {
            Net::ResNet50 => "ONNX ResNet-50",
            Net::Encoder => "ONNX encoder 4×256",
        }
    }

    /// Floating-point operations of one call at `batch`: two per
    /// multiply-add of the convolutions and matrix products (the usual
    /// count, which leaves out pooling, normalization and activations).
    pub fn work(self, batch: usize) -> Work {
        let per_item = match self {
            Net::ResNet50 => 2.0 * resnet50_macs(),
            Net::Encoder => {
                let (l, d, f, layers) = ENC;
                // Q, K, V and output projections, scores and weighted
                // values, and the two feed-forward products, per layer.
                let macs = 4 * l * d * d + 2 * l * l * d + 2 * l * d * f;
                2.0 * (layers * macs) as f64
            }
        };
        Work::Flops(per_item * batch as f64)
    }
}

/// Multiply-adds of one ResNet-50 image at 224×224 (about 4.1 G):
/// the stem, each bottleneck's three convolutions and its projection
/// shortcut, and the classifier.
fn resnet50_macs() -> f64 {
    let conv = |cin: usize, cout: usize, k: usize, out_hw: usize| {
        (cin * cout * k * k * out_hw * out_hw) as f64
    };
    let mut macs = conv(3, 64, 7, 112);
    let (mut cin, mut hw) = (64, 56);
    for (width, count, stride) in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)] {
        for i in 0..count {
            let s = if i == 0 { stride } else { 1 };
            let out_hw = hw / s;
            let cout = 4 * width;
            macs += conv(cin, width, 1, hw)
                + conv(width, width, 3, out_hw)
                + conv(width, cout, 1, out_hw);
            if i == 0 {
                macs += conv(cin, cout, 1, out_hw);
            }
            cin = cout;
            hw = out_hw;
        }
    }
    macs + (2048 * 1000) as f64
}

/// Where the exported models and their input and expected-output files
/// live: `MOROK_BENCH_MODELS`, else `morok-bench-models` in the system's
/// temporary folder (the same in the first-call and round children,
/// which get another `MOROK_CACHE_DIR`).
pub fn models_dir() -> PathBuf {
    std::env::var_os("MOROK_BENCH_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("morok-bench-models"))
}

/// Exports the models with `python` (PyTorch) unless [`models_dir`]
/// holds a finished export; the error says why they are missing.
pub fn ensure_models(python: &Path) -> Result<(), String> {
    let dir = models_dir();
    if dir.join("done").exists() {
        return Ok(());
    }
    if !python.exists() {
        return Err(format!(
            "W10's models are not in {} and there is no Python at {} to export them \
             (PyTorch and onnx needed)",
            dir.display(),
            python.display()
        ));
    }
    let script = crate::peers::repo_root().join("morok-bench/peers/export_models.py");
    eprintln!("exporting W10's models into {} ...", dir.display());
    let out = Command::new(python)
        .arg(&script)
        .arg(&dir)
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        return Err(format!(
            "exporting W10's models failed ({}): {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    Ok(())
}

fn read_f32(path: &Path) -> Result<Vec<f32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{}: {} bytes, not float32s",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// The input of workload `id` (`W10a`, ...) as the export wrote it.
pub fn input(id: &str, net: Net, batch: usize) -> Result<HostInput, String> {
    let shape = net.input_shape(batch);
    let values = read_f32(&models_dir().join(format!("{id}.input.f32")))?;
    if values.len() != shape.iter().product::<usize>() {
        return Err(format!(
            "{id}: the input file holds {} values, not {shape:?}",
            values.len()
        ));
    }
    Ok((shape, values))
}

/// Compares `out` with PyTorch's output for workload `id`: equal length
/// and every element within 1e-3 of the largest magnitude (float32
/// convolutions and products summed in another order differ by about
/// 1e-6 of it; a wrong weight or index by far more).
pub fn check(id: &str, out: &[f32]) -> Result<(), String> {
    let want = read_f32(&models_dir().join(format!("{id}.expected.f32")))?;
    if want.len() != out.len() {
        return Err(format!(
            "{id}: {} output elements, PyTorch gives {}",
            out.len(),
            want.len()
        ));
    }
    let scale = want.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    for (i, (a, b)) in out.iter().zip(&want).enumerate() {
        // NaN fails too: it is not within any distance.
        let within = (a - b).abs() <= 1e-3 * scale;
        if !within {
            return Err(format!("{id}: element {i} is {a}, PyTorch gives {b}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet50_counts_its_well_known_four_giga_multiply_adds() {
        let g = resnet50_macs() / 1e9;
        assert!((4.08..4.12).contains(&g), "{g}");
    }
}
