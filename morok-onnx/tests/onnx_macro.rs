//! The `onnx!` macro: its example runs and prints the reference's values,
//! its compile errors (ui-tests), and the op list it checks against.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target directory's profile folder (`target/debug`) of this test binary.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/onnx_macro-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

#[test]
fn example_prints_the_reference_probabilities() {
    let out = Command::new(env!("CARGO"))
        .args([
            "run",
            "--quiet",
            "-p",
            "morok-onnx",
            "--example",
            "onnx_macro",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "example onnx_macro failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // NumPy on the file's weights (relu(x·w1 + b1)·w2 + b2, softmax).
    assert_eq!(
        stdout,
        "row 0: probs 0.1847 0.1662 0.6491\nrow 1: probs 0.9707 0.0190 0.0103\n"
    );
}

#[test]
fn op_table_matches_schema() {
    assert_eq!(
        morok_onnx::supported_ops(),
        morok_onnx_schema::SUPPORTED_OPS.to_vec(),
        "morok-onnx's op table and morok-onnx-schema's SUPPORTED_OPS differ"
    );
}

#[test]
fn compile_errors() {
    // trybuild builds the cases in <target>/tests/trybuild/morok-onnx,
    // which is their CARGO_MANIFEST_DIR: put the models there.
    let target = profile_dir()
        .parent()
        .expect("<target>/<profile>")
        .to_path_buf();
    let models = target.join("tests/trybuild/morok-onnx/ui-models");
    std::fs::create_dir_all(&models).expect("creating the ui-models folder");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    for name in ["mlp.onnx", "malformed.onnx", "unsupported.onnx"] {
        std::fs::copy(source.join(name), models.join(name)).expect("copying a model");
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui-tests/*.rs");
}
