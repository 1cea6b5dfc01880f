//! The `light` models shipped in the `onnx` Python package (AlexNet,
//! DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet,
//! VGG-19, ZFNet-512, their weights replaced by `ConstantOfShape` nodes)
//! run on ONNX's dummy input (`arange(n) / n` in the declared shape) and
//! match the shipped outputs at the tolerances of ONNX's own runner.
//!
//! Point `MOROK_ONNX_LIGHT_DIR` at `onnx/backend/test/data/light` of the
//! installed package (`.ci/run` does); without it the test prints why it
//! skips. `MOROK_ONNX_LIGHT_MODELS` (comma-separated names such as
//! `resnet50`) restricts the run.

mod common;

use common::{check_output, ATOL, RTOL};
use morok::Tensor;
use morok_onnx::{tensor_from_pb, Dim, Model};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The models and their relative tolerances (ONNX's runner's table).
const MODELS: [(&str, f64); 9] = [
    ("bvlc_alexnet", RTOL),
    ("densenet121", 2e-3),
    ("inception_v1", RTOL),
    ("inception_v2", RTOL),
    ("resnet50", RTOL),
    ("shufflenet", RTOL),
    ("squeezenet", RTOL),
    ("vgg19", RTOL),
    ("zfnet512", RTOL),
];

/// Runs model `name` on the dummy input; `Err` says how it does not match.
fn run_model(dir: &std::path::Path, name: &str, rtol: f64) -> Result<(), String> {
    let start = Instant::now();
    let model = Model::load(dir.join(format!("light_{name}.onnx"))).map_err(|e| e.to_string())?;
    let mut feeds = Vec::new();
    for input in model.inputs() {
        let shape: Vec<usize> = input
            .shape
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => *n,
                _ => 1,
            })
            .collect();
        let n: usize = shape.iter().product();
        let values: Vec<f32> = (0..n).map(|i| (i as f64 / n as f64) as f32).collect();
        feeds.push((
            input.name.clone(),
            Tensor::from_vec(values, &shape).map_err(|e| e.to_string())?,
        ));
    }
    let named: Vec<(&str, &Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let outputs = model.run(&named).map_err(|e| e.to_string())?;
    let bytes =
        std::fs::read(dir.join(format!("light_{name}_output_0.pb"))).map_err(|e| e.to_string())?;
    let expected = tensor_from_pb(&bytes).map_err(|e| e.to_string())?;
    let verdict = check_output(&outputs[0], &expected, rtol, ATOL);
    println!(
        "{name}: {} in {:.1} s",
        verdict
            .as_ref()
            .map_or_else(|e| format!("MISMATCH {e}"), |_| "ok".to_string()),
        start.elapsed().as_secs_f64()
    );
    verdict.map_err(|e| e.to_string())
}

/// Every selected model, on as many threads as the host has cores (each
/// model compiles its own kernels; one thread would leave cores idle).
#[test]
fn onnx_light_models() {
    let Some(dir) = std::env::var_os("MOROK_ONNX_LIGHT_DIR").map(PathBuf::from) else {
        println!("skipped: MOROK_ONNX_LIGHT_DIR is not set (point it at onnx/backend/test/data/light of the onnx package; .ci/run does)");
        return;
    };
    let only = std::env::var("MOROK_ONNX_LIGHT_MODELS").ok();
    let selected: Vec<(&str, f64)> = MODELS
        .into_iter()
        .filter(|(name, _)| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|m| m == *name))
        })
        .collect();
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(name, rtol)) = selected.get(i) else {
                    break;
                };
                if let Err(e) = run_model(&dir, name, rtol) {
                    failures.lock().unwrap().push(format!("{name}: {e}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "light models that do not match:\n{}",
        failures.join("\n")
    );
}
