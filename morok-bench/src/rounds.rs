//! Rounds of fresh processes for the memory-bound workloads.
//!
//! On the VMs of this kind the memory bandwidth comes in periods of
//! seconds to minutes at about twice the usual rate: the same row-sum
//! kernel read its 64 MiB at 55 to 101 GB/s in five fresh processes in a
//! row on an idle machine, and the peers' figures swing the same way. One
//! timing per side decides a memory-bound comparison by which side caught
//! such a period. So after the main pass the harness runs the
//! memory-bound workloads (those compared with a bandwidth limit) in more
//! rounds: each round starts a fresh Morok process (this binary with the
//! hidden [`CHILD_FLAG`]) and then every peer again, alternating. Each
//! side's figure is the median over the rounds of its per-process medians,
//! so one lucky or unlucky period on either side no longer decides the
//! ratio. Compute-bound workloads do not swing and run once.

use crate::peers::PeerResult;
use crate::workloads::{self, Workload};
use std::process::{Command, ExitCode};

/// The hidden flag of the warm-timing child process.
pub const CHILD_FLAG: &str = "--warm-child";

/// Morok's part of one round: runs this binary in a fresh process on the
/// workloads `ids` (at most `runs` timed calls each) and returns each
/// workload's median warm time in ms, in the order of `ids`.
pub fn morok_round(ids: &[&str], runs: usize) -> Result<Vec<f64>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let out = Command::new(exe)
        .arg(CHILD_FLAG)
        .arg(runs.to_string())
        .args(ids)
        .output()
        .map_err(|e| format!("spawning: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "child exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse_warm_lines(&String::from_utf8_lossy(&out.stdout), ids)
}

/// The child's `WARM_MS <id> <ms>` lines as one figure per id of `ids`.
fn parse_warm_lines(text: &str, ids: &[&str]) -> Result<Vec<f64>, String> {
    ids.iter()
        .map(|id| {
            text.lines()
                .find_map(|l| {
                    let mut f = l.strip_prefix("WARM_MS ")?.split_whitespace();
                    (f.next()? == *id).then(|| f.next()?.parse().ok())?
                })
                .ok_or_else(|| format!("no WARM_MS line for {id} in {text:?}"))
        })
        .collect()
}

/// The child: `<runs> <ids...>`. For each workload it uploads the inputs,
/// makes one checked call (the kernels come from the parent's on-disk
/// cache) and the main pass's warm-up calls, times at most `runs` warm calls as the
/// main pass does and prints `WARM_MS <id> <median ms>`.
pub fn child_main(args: &[String]) -> ExitCode {
    let Some(runs) = args.first().and_then(|r| r.parse::<usize>().ok()) else {
        eprintln!("{CHILD_FLAG}: expected a run count, got {:?}", args.first());
        return ExitCode::from(2);
    };
    for id in &args[1..] {
        let Some(w) = workloads::ALL.iter().find(|w| w.id == id) else {
            eprintln!("{CHILD_FLAG}: unknown workload {id:?}");
            return ExitCode::from(2);
        };
        match time_in_this_process(w, runs) {
            Ok(ms) => println!("WARM_MS {id} {ms}"),
            Err(e) => {
                eprintln!("{id}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// One workload's median warm time in this process (see [`child_main`]).
fn time_in_this_process(w: &Workload, runs: usize) -> Result<f64, String> {
    let (host, mut t) = crate::upload(w, false)?;
    let t0 = std::time::Instant::now();
    let out = crate::call(w, &mut t)?;
    let first = t0.elapsed();
    let values = out.to_vec::<f32>().map_err(|e| e.to_string())?;
    w.check(&host, &values)?;
    crate::warm_up(w, &mut t, first)?;
    let mut times = crate::time_warm(w, &mut t, runs, first)?;
    Ok(crate::median(&mut times))
}

/// Folds the peers' results of later rounds into the first round's:
/// every result of a workload in `ids` collects its figure from each
/// round (matched by peer, variant and workload) in `rounds`, and its
/// median becomes the median over the rounds. A variant that failed in a
/// later round keeps the rounds it has.
pub fn merge_peer_rounds(first: &mut Vec<PeerResult>, later: &[Vec<PeerResult>], ids: &[&str]) {
    for r in first.iter_mut() {
        r.rounds = vec![r.median_ms];
    }
    for round in later {
        for r in round.iter().filter(|r| ids.contains(&r.workload.as_str())) {
            let same = |x: &&mut PeerResult| {
                x.peer == r.peer && x.variant == r.variant && x.workload == r.workload
            };
            match first.iter_mut().find(same) {
                Some(x) => x.rounds.push(r.median_ms),
                None => first.push(PeerResult {
                    rounds: vec![r.median_ms],
                    ..r.clone()
                }),
            }
        }
    }
    for r in first.iter_mut() {
        r.median_ms = crate::median(&mut r.rounds.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(peer: &str, variant: &str, workload: &str, ms: f64) -> PeerResult {
        PeerResult {
            peer: peer.into(),
            variant: variant.into(),
            workload: workload.into(),
            median_ms: ms,
            correct: Some(true),
            first_ms: None,
            rounds: vec![],
        }
    }

    #[test]
    fn warm_lines_in_id_order() {
        let text = "noise\nWARM_MS W7 0.5\nWARM_MS W2a 0.75\n";
        assert_eq!(parse_warm_lines(text, &["W2a", "W7"]).unwrap(), [0.75, 0.5]);
        assert!(parse_warm_lines(text, &["W3"]).is_err());
    }

    #[test]
    fn peer_figures_become_medians_over_rounds() {
        let mut first = vec![
            result("torch", "eager", "W2a", 0.6),
            result("numpy", "plain", "W4a", 5.0),
        ];
        let later = vec![
            vec![
                result("torch", "eager", "W2a", 1.2),
                result("jax", "jit", "W2a", 1.0),
            ],
            vec![
                result("torch", "eager", "W2a", 0.9),
                result("numpy", "plain", "W4a", 9.0),
            ],
        ];
        merge_peer_rounds(&mut first, &later, &["W2a"]);
        let torch = first.iter().find(|r| r.peer == "torch").unwrap();
        assert_eq!(torch.rounds, [0.6, 1.2, 0.9]);
        assert_eq!(torch.median_ms, 0.9);
        // A workload outside `ids` keeps its single figure.
        let numpy = first.iter().find(|r| r.peer == "numpy").unwrap();
        assert_eq!((numpy.median_ms, numpy.rounds.len()), (5.0, 1));
        // A variant seen only in a later round is added.
        let jax = first.iter().find(|r| r.peer == "jax").unwrap();
        assert_eq!(jax.rounds, [1.0]);
    }
}
