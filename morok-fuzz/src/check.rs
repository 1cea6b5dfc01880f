//! Runs a [`Program`]: builds its tensors, realizes its intermediates and
//! outputs, differentiates it, and compares every compiled value with the
//! reference evaluator, as closely as [`Trust`] says (a difference past
//! a discontinuity of rounded operands is counted as not comparable, not
//! as a mismatch). A panic anywhere is caught and counted as a crash.

use crate::data::{compare_within, compiled, reference};
use crate::program::{build, Program};
use crate::trust::Trust;
use morok::{DType, ScalarType, Tensor};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What went wrong with a program, worst last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureKind {
    /// A step did not apply to its operands (an invalid program: the
    /// shrinker's candidates can be; a generated program is not).
    Invalid,
    /// The reference evaluator failed.
    Reference,
    /// Compiling or running the kernels failed with an error.
    Compile,
    /// Compiled values differ from the reference's.
    Mismatch,
    /// The compiler panicked.
    Crash,
}

/// One failure of a program.
#[derive(Clone, Debug)]
pub struct Failure {
    /// Its kind.
    pub kind: FailureKind,
    /// What failed and how.
    pub message: String,
}

/// What running one program did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Ops (steps that are not inputs).
    pub ops: usize,
    /// Kernels compiled while it ran (kernel cache misses).
    pub kernels: usize,
    /// Tensors whose compiled values were compared with the reference.
    pub compared: usize,
    /// Gradients among them.
    pub grads: usize,
    /// Tensors whose values differed from the reference's where they
    /// cannot be compared reliably: computed past a discontinuity (or a
    /// kink, for gradients) of rounded values, or holding 64-bit integers
    /// the reference cannot (see [`crate::trust`]); not counted as
    /// mismatches.
    pub unchecked: usize,
    /// Tensors whose trust says a difference would not be a mismatch,
    /// whether or not they differed (so `unchecked <= unreliable`).
    pub unreliable: usize,
    /// Its failures.
    pub failures: Vec<Failure>,
}

impl Outcome {
    /// The worst failure, if any.
    pub fn worst(&self) -> Option<&Failure> {
        self.failures.iter().max_by_key(|f| f.kind)
    }

    /// Whether the program failed in a way that is the compiler's fault
    /// (anything but an invalid program).
    pub fn failed(&self) -> bool {
        self.worst().is_some_and(|f| f.kind > FailureKind::Invalid)
    }

    fn fail(&mut self, kind: FailureKind, message: String) {
        self.failures.push(Failure { kind, message });
    }

    /// Compares the compiled values of `got` with the reference values
    /// `want` (evaluated before anything was realized: realizing must not
    /// change what the graph means, so a run that clobbers an input is a
    /// mismatch too), within the tolerance `trust` allows. A difference in
    /// a value `trust` marks unchecked is counted as not comparable, not
    /// as a mismatch (values that agree count as compared either way).
    fn compare(&mut self, label: &str, want: Result<Vec<f64>, String>, got: &Tensor, trust: Trust) {
        let w = match want {
            Ok(w) => w,
            Err(e) => return self.fail(FailureKind::Reference, format!("{label}: reference: {e}")),
        };
        let g = match compiled(got) {
            Ok(g) => g,
            Err(e) => return self.fail(FailureKind::Compile, format!("{label}: compiled: {e}")),
        };
        if trust.unchecked {
            self.unreliable += 1;
        }
        let looseness = if trust.gradient {
            crate::trust::GRADIENT_LOOSENESS
        } else {
            1.0
        };
        match compare_within(trust.tolerance_type(got.dtype()), looseness, &g, &w) {
            Ok(()) => self.compared += 1,
            Err(_) if trust.unchecked => self.unchecked += 1,
            Err(e) => {
                self.compared += 1;
                self.fail(FailureKind::Mismatch, format!("{label}: {e}"));
            }
        }
    }
}

/// The reference values of `t`, the error as text.
fn want(t: &Tensor) -> Result<Vec<f64>, String> {
    reference(t).map_err(|e| e.to_string())
}

/// Runs `program` (see the module docs) on the default device under the
/// current optimizer mode.
pub fn run(program: &Program) -> Outcome {
    let before = morok::stats::kernel_compiles();
    let mut out = Outcome::default();
    let result = catch_unwind(AssertUnwindSafe(|| run_steps(program, &mut out)));
    if let Err(p) = result {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        out.fail(FailureKind::Crash, format!("panic: {msg}"));
    }
    out.kernels = morok::stats::kernel_compiles().saturating_sub(before);
    out
}

/// Whether `t`, a 64-bit integer node, holds reference values the f64
/// elements of the reference cannot hold exactly (beyond 2^53).
fn beyond_exact(t: &Tensor) -> bool {
    let st = t.dtype().scalar_type();
    matches!(st, ScalarType::I64 | ScalarType::U64)
        && want(t).is_ok_and(|v| v.iter().any(|x| x.abs() > 2f64.powi(53)))
}

fn run_steps(program: &Program, out: &mut Outcome) {
    let mut nodes: Vec<Tensor> = Vec::with_capacity(program.steps.len());
    let mut trust: Vec<Trust> = Vec::with_capacity(program.steps.len());
    for (i, s) in program.steps.iter().enumerate() {
        let t = match build(s, &nodes) {
            Ok(t) => t,
            Err(e) => return out.fail(FailureKind::Invalid, format!("t{i} = {}: {e}", s.op)),
        };
        if !program.is_input(i) {
            out.ops += 1;
        }
        let srcs: Vec<Trust> = s
            .src
            .iter()
            .filter_map(|&j| trust.get(j).copied())
            .collect();
        trust.push(Trust::of_step(s, t.dtype(), &srcs, beyond_exact(&t)));
        if s.op == "realize" {
            let w = want(&t);
            match t.realize() {
                Ok(r) => {
                    out.compare(&format!("t{i}"), w, &r, trust[i]);
                    nodes.push(r);
                }
                Err(e) => {
                    out.fail(FailureKind::Compile, format!("t{i} = realize: {e}"));
                    nodes.push(t);
                }
            }
        } else {
            nodes.push(t);
        }
    }
    let Some(outs) = program
        .outputs
        .iter()
        .map(|&i| nodes.get(i))
        .collect::<Option<Vec<&Tensor>>>()
    else {
        return out.fail(FailureKind::Invalid, "an output past the steps".into());
    };
    let wants: Vec<Result<Vec<f64>, String>> = outs.iter().map(|t| want(t)).collect();
    match Tensor::realize_all(&outs) {
        Ok(done) => {
            for ((&i, w), got) in program.outputs.iter().zip(wants).zip(&done) {
                out.compare(&format!("t{i}"), w, got, trust[i]);
            }
        }
        Err(e) => out.fail(FailureKind::Compile, format!("realize_all: {e}")),
    }
    if program.gradient {
        gradients(program, &nodes, Trust::of_gradient(&trust), out);
    }
}

/// Gradient mode: the gradient of the sum of the float outputs with
/// respect to every float input, compiled and compared with the reference
/// evaluator's values of the same graphs, as closely as `trust` (the
/// program's, [`Trust::of_gradient`]) allows.
fn gradients(program: &Program, nodes: &[Tensor], trust: Trust, out: &mut Outcome) {
    let float = |t: &Tensor| t.dtype().is_float();
    let inputs: Vec<usize> = (0..nodes.len())
        .filter(|&i| program.is_input(i) && float(&nodes[i]))
        .collect();
    let outputs: Vec<&Tensor> = program
        .outputs
        .iter()
        .map(|&i| &nodes[i])
        .filter(|t| float(t))
        .collect();
    if inputs.is_empty() || outputs.is_empty() {
        return;
    }
    let total = |t: &Tensor| t.sum(None, false)?.cast(DType::F32);
    let loss = outputs[1..]
        .iter()
        .fold(total(outputs[0]), |acc, t| acc?.add(&total(t)?));
    let targets: Vec<&Tensor> = inputs.iter().map(|&i| &nodes[i]).collect();
    let grads = match loss.and_then(|l| l.gradient(&targets)) {
        Ok(g) => g,
        Err(e) => return out.fail(FailureKind::Compile, format!("gradient: {e}")),
    };
    for (g, &i) in grads.iter().zip(&inputs) {
        let before = out.compared;
        out.compare(&format!("d/dt{i}"), want(g), g, trust);
        out.grads += out.compared - before;
    }
}
