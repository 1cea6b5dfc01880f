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

#[test]
fn onnx_light_models() {
    let Some(dir) = std::env::var_os("MOROK_ONNX_LIGHT_DIR").map(PathBuf::from) else {
        println!("skipped: MOROK_ONNX_LIGHT_DIR is not set (point it at onnx/backend/test/data/light of the onnx package; .ci/run does)");
        return;
    };
    let only = std::env::var("MOROK_ONNX_LIGHT_MODELS").ok();
    let mut failures = Vec::new();
    for (name, rtol) in MODELS {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|m| m == name))
        {
            continue;
        }
        let start = Instant::now();
        let model = Model::load(dir.join(format!("light_{name}.onnx")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
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
                Tensor::from_vec(values, &shape).unwrap(),
            ));
        }
        let named: Vec<(&str, &Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t)).collect();
        let outputs = model.run(&named).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = std::fs::read(dir.join(format!("light_{name}_output_0.pb"))).unwrap();
        let expected = tensor_from_pb(&bytes).unwrap();
        let verdict = check_output(&outputs[0], &expected, rtol, ATOL);
        println!(
            "{name}: {} in {:.1} s",
            verdict
                .as_ref()
                .map_or_else(|e| format!("MISMATCH {e}"), |_| "ok".to_string()),
            start.elapsed().as_secs_f64()
        );
        if let Err(e) = verdict {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "light models that do not match:\n{}",
        failures.join("\n")
    );
}
