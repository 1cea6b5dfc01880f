//! Runs every example program and checks the lines the Hands-On chapter
//! promises.

use std::process::Command;

/// Runs `cargo run --example name` (with the features this test was
/// built with that add devices) and returns its standard output.
fn run_example(name: &str) -> String {
    run_example_with(name, &[])
}

/// [`run_example`] with arguments for the program.
fn run_example_with(name: &str, args: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["run", "--quiet", "--example", name]);
    if cfg!(feature = "llvm") {
        cmd.args(["--features", "llvm"]);
    }
    cmd.arg("--").args(args);
    let out = cmd
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "example {name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn assert_lines(name: &str, out: &str, expected: &[&str]) {
    for line in expected {
        assert!(out.contains(line), "example {name}: no {line:?} in:\n{out}");
    }
}

#[test]
fn hello_tensor() {
    let out = run_example("hello_tensor");
    assert_lines("hello_tensor", &out, &["Result: [1.1, 2.2, 3.3, 4.4]"]);
}

#[test]
fn shapes() {
    let out = run_example("shapes");
    assert_lines(
        "shapes",
        &out,
        &[
            "Original shape: [6]",
            "Matrix shape: [2, 3]",
            "Transposed shape: [3, 2]",
            "[[101.0, 204.0],\n [102.0, 205.0],\n [103.0, 206.0]]",
            "Error: add: [3, 2] and [3]: ",
            "examples/shapes.rs:",
        ],
    );
}

#[test]
fn matmul() {
    let out = run_example("matmul");
    assert_lines("matmul", &out, &["Output shape: [4, 2]", "shape=[4, 2]"]);
}

#[test]
fn linear() {
    let out = run_example("linear");
    assert_lines("linear", &out, &["Output: [", "shape=[2]"]);
}

#[test]
fn mnist() {
    let out = run_example("mnist");
    assert_lines(
        "mnist",
        &out,
        &[
            "Probabilities: [[",
            "shape=[1, 10]",
            "Predicted digit: [",
            "shape=[1]",
        ],
    );
}

#[test]
fn under_the_hood() {
    let out = run_example("under_the_hood");
    assert_lines(
        "under_the_hood",
        &out,
        &[
            "=== IR Graph ===",
            "ADD : f32",
            "BUFFER(id=",
            "=== Generated Kernels ===",
            "Kernel 0: ",
            "Backend: ",
            "Result: [5.0, 7.0, 9.0]",
        ],
    );
}

#[test]
fn digits_centroid() {
    let out = run_example("digits_centroid");
    assert!(accuracy_of(&out) > 0.85, "{out}");
}

/// The value of the `accuracy: ` line of an example's output.
fn accuracy_of(out: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix("accuracy: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no accuracy line in:\n{out}"))
}

/// The README's main example trains a CNN (four epochs here, in a debug
/// build; the release run of thirty is in the README).
#[test]
fn digits() {
    let out = run_example_with("digits", &["4"]);
    assert_lines("digits", &out, &["epoch  1: loss ", "epoch  4: loss "]);
    assert!(accuracy_of(&out) > 0.93, "{out}");
}

/// A `model!` network trains (five epochs here).
#[test]
fn model_train() {
    let out = run_example_with("model_train", &["5"]);
    assert_lines(
        "model_train",
        &out,
        &[
            "training fc1.weight, fc1.bias, fc2.weight, fc2.bias",
            "epoch  5: loss ",
        ],
    );
    assert!(accuracy_of(&out) > 0.8, "{out}");
}

#[test]
fn kernel_attr() {
    let out = run_example("kernel_attr");
    assert_lines(
        "kernel_attr",
        &out,
        &[
            "B = 1: output shape [1, 10]",
            "B = 7: output shape [7, 10]",
            "Error: mlp: parameter `x` dim 1 is 32 but the signature says 64 (f32[B, 64]) at examples/kernel_attr.rs:",
        ],
    );
}

#[test]
fn inline_kernel() {
    let out = run_example("inline_kernel");
    assert_lines(
        "inline_kernel",
        &out,
        &[
            "relu(2 a@b) = [4.0, 0.0, 10.0, 0.0]",
            "(x + x)^2 = [4.0, 16.0, 36.0, 64.0]",
            "Error: kernel!: dim `N` is 4 in parameter `x` (dim 0) but 1 in parameter `y` (dim 0)",
        ],
    );
}

#[test]
fn model_digits() {
    let out = run_example("model_digits");
    assert_lines(
        "model_digits",
        &out,
        &[
            "fc1.weight: [128, 64]",
            "fc2.bias: [10]",
            "output [1797, 10]",
            "reloaded from safetensors: identical = true",
        ],
    );
}

#[test]
fn your_crate() {
    let out = run_example("your_crate");
    assert_lines(
        "your_crate",
        &out,
        &[
            "mlp: [32, 10]",
            "first row sums to 1.000",
            "fc1.weight: [128, 64]",
            "fc2.bias: [10]",
            "reloaded model gives the same output: true",
        ],
    );
}

/// README.md's "Use it in your crate" shows `examples/your_crate.rs`
/// verbatim (past its doc comment), so the snippet runs as shown.
#[test]
fn readme_shows_the_your_crate_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example = std::fs::read_to_string(format!("{root}/examples/your_crate.rs")).unwrap();
    let code: Vec<&str> = example
        .lines()
        .skip_while(|l| l.starts_with("//!") || l.is_empty())
        .collect();
    let block = format!("```rust\n{}\n```", code.join("\n"));
    assert!(
        readme.contains(&block),
        "README.md's \"Use it in your crate\" differs from examples/your_crate.rs"
    );
}
