//! Random graph differential fuzzer: the programs of `morok-fuzz`'s
//! generator (seeded random DAGs of movement, indexing, elementwise ops
//! with broadcasting and scalars, casts, reductions, matmul, softmax),
//! with intermediates shared by several consumers, inputs used twice,
//! intermediates realized before the graph goes on, and several outputs
//! realized together. Every output is compared with the reference
//! evaluator; the ops compose, so the test reaches fusion, rangeify,
//! kernel splitting, buffer reuse and index simplification paths that
//! single ops do not.
//!
//! Gradient mode: each graph with float inputs and float outputs is also
//! differentiated (the gradient of the sum of its float outputs with
//! respect to every float input), and the compiled gradients are compared
//! with the reference evaluator's values of the same gradient graphs.
//!
//! Graph `i` is program `i` of seed `SEED` (`morok_fuzz::generate`), so a
//! failure is reproduced by `GRAPH_FUZZ_ONLY=i cargo test --test
//! graph_fuzz`, which runs that graph and prints its program;
//! `GRAPH_FUZZ_GRAPHS=n` runs graphs `0..n` instead of the default set (a
//! longer search; `morok-fuzz`'s binary runs many more, on C and LLVM,
//! under random opts too, and shrinks failures).

mod common;

use common::report;
use morok_fuzz::check;
use morok_fuzz::generate::{generate, Limits};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Number of random graphs.
const GRAPHS: usize = 300;
/// The seed of the graphs.
const SEED: u64 = 0x6a_f022;

/// What one graph did: its ops, its gradients and its failures.
struct Outcome {
    ops: usize,
    grads: usize,
    failure: Option<String>,
}

fn run_graph(index: usize) -> Outcome {
    let generated = generate(SEED, index as u64, Limits::default());
    let program = &generated.program;
    let out = check::run(program);
    let mut failures = generated.refused.clone();
    failures.extend(
        out.failures
            .iter()
            .map(|f| format!("{:?}: {}", f.kind, f.message)),
    );
    let text = program.text().replace('\n', "\n    ");
    let failure = (!failures.is_empty()).then(|| {
        format!(
            "graph {index}:\n    {text}\n  failed: {}",
            failures.join("\n          ")
        )
    });
    if std::env::var("GRAPH_FUZZ_ONLY").is_ok() {
        report(&format!("graph {index}:\n    {text}"));
    }
    Outcome {
        ops: out.ops,
        grads: out.grads,
        failure,
    }
}

/// Every random graph, compiled and compared with the reference; graphs
/// are spread over a few threads (each graph is independent).
#[test]
fn random_graphs_match_reference() {
    let only: Option<usize> = std::env::var("GRAPH_FUZZ_ONLY")
        .ok()
        .map(|v| v.parse().expect("GRAPH_FUZZ_ONLY is a graph index"));
    let indices: Vec<usize> = match only {
        Some(i) => vec![i],
        None => {
            let count = std::env::var("GRAPH_FUZZ_GRAPHS")
                .ok()
                .map_or(GRAPHS, |v| v.parse().expect("GRAPH_FUZZ_GRAPHS is a count"));
            (0..count).collect()
        }
    };
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = indices.get(k) else { break };
                let o = run_graph(i);
                results.lock().unwrap().push((i, o));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let ops: usize = results.iter().map(|(_, o)| o.ops).sum();
    let grads: usize = results.iter().map(|(_, o)| o.grads).sum();
    let failures: Vec<&String> = results
        .iter()
        .filter_map(|(_, o)| o.failure.as_ref())
        .collect();
    report(&format!(
        "graph fuzz: {} graphs, {ops} ops, {grads} gradients, {} failed",
        results.len(),
        failures.len()
    ));
    assert!(
        failures.is_empty(),
        "{} of {} graphs failed:\n{}",
        failures.len(),
        results.len(),
        failures
            .iter()
            .take(20)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Every random graph (or those `GRAPH_FUZZ_ONLY` / `GRAPH_FUZZ_GRAPHS`
/// pick) compiled with the optimizer off (`MOROK_NOOPT=1`: plain loops),
/// in a child process.
#[test]
fn random_graphs_match_reference_without_the_optimizer() {
    common::passes_without_optimizer("random_graphs_match_reference", "graph fuzz:", &[]);
}
