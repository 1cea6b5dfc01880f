//! `--first-call-profile`: each workload's first call (a fresh process,
//! an empty kernel cache, as the main table's first-call column) broken
//! down by stage of the compile path (`morok::profile`), with the C
//! device and, in a build with the `llvm` feature, the LLVM device.
//!
//! A stage's time is summed over the threads that ran it: the kernels of
//! a schedule compile on up to one thread per core, so on 2 cores the
//! stages can add up to more than the call's wall-clock time. "other" is
//! what the wall-clock time holds beyond the stages (building the tensor
//! graph, allocating, uploading; negative where compiles overlapped).
//! The table goes to `<out>/first-call-profile.md`.

use crate::workloads::Workload;
use crate::Options;
use std::fmt::Write;

/// The child's flag that turns the stage timers on.
pub const PROFILE_FLAG: &str = "--profile";

/// Prints the stage totals of this process (the child's side), a
/// `STAGE name ms count` line each.
pub fn print_stages() {
    for (stage, took, count) in morok::profile::snapshot() {
        println!(
            "STAGE {} {} {count}",
            stage.name(),
            took.as_secs_f64() * 1e3
        );
    }
}

/// One first call: wall-clock ms and each stage's ms and count.
struct Profile {
    wall_ms: f64,
    stages: Vec<(String, f64, u64)>,
}

/// Parses a profiling child's output.
fn parse(stdout: &str) -> Result<Profile, String> {
    let wall_ms = crate::first_call_ms(stdout)?;
    let stages = stdout
        .lines()
        .filter_map(|l| {
            let mut f = l.strip_prefix("STAGE ")?.split(' ');
            let name = f.next()?.to_string();
            let ms = f.next()?.parse().ok()?;
            let count = f.next()?.parse().ok()?;
            Some((name, ms, count))
        })
        .collect();
    Ok(Profile { wall_ms, stages })
}

/// The devices profiled: `MOROK_DEVICE` name and column name.
fn devices() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("CPU", "C")];
    if cfg!(feature = "llvm") {
        v.push(("LLVM", "LLVM"));
    }
    v
}

/// Profiles every selected workload on every device; prints the table
/// and writes it to `<out>/first-call-profile.md`. `Ok(false)` when a
/// workload failed.
pub fn run(opts: &Options, selected: &[Workload]) -> Result<bool, String> {
    let mut ok = true;
    let mut rows = Vec::new();
    for w in selected {
        for (device, name) in devices() {
            eprintln!("{} on {name} ...", w.id);
            match crate::first_call_child_output(w, opts.quick, &[PROFILE_FLAG], Some(device))
                .and_then(|out| parse(&out))
            {
                Ok(p) => rows.push((w.id, name, p)),
                Err(e) => {
                    eprintln!("  {}: {e}", w.id);
                    ok = false;
                }
            }
        }
    }
    let table = render(&rows, opts.quick);
    print!("{table}");
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let path = opts.out.join("first-call-profile.md");
    std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(ok)
}

/// The Markdown table of `rows` (workload, device column name, profile).
fn render(rows: &[(&str, &str, Profile)], quick: bool) -> String {
    let mut s = String::from("# First call, stage by stage\n\n");
    let _ = writeln!(
        s,
        "Written by `morok-bench --first-call-profile` at {} on {} ({} cores){}.\n\
         Each row is one first call in a fresh process with an empty kernel cache. \
         Stage times are milliseconds summed over the threads that ran them \
         (kernels compile in parallel), with the number of times each ran; \
         \"other\" is the wall-clock time beyond the stages (graph building, \
         allocation, uploads; negative where compiles overlapped).\n",
        crate::utc_now(),
        morok::backends::host::cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        if quick { ", `--quick` sizes" } else { "" }
    );
    let stages: Vec<&str> = morok::profile::Stage::ALL
        .iter()
        .map(|s| s.name())
        .collect();
    let _ = writeln!(
        s,
        "| workload | device | wall ms | {} | other |",
        stages.join(" | ")
    );
    let _ = writeln!(s, "|---|---|---:|{}---:|", "---:|".repeat(stages.len()));
    for (id, device, p) in rows {
        let mut cells = Vec::new();
        let mut sum = 0.0;
        for name in &stages {
            let (ms, count) = p
                .stages
                .iter()
                .find(|(n, _, _)| n == name)
                .map_or((0.0, 0), |(_, ms, c)| (*ms, *c));
            sum += ms;
            cells.push(format!("{ms:.1} ({count})"));
        }
        let _ = writeln!(
            s,
            "| {id} | {device} | {:.1} | {} | {:.1} |",
            p.wall_ms,
            cells.join(" | "),
            p.wall_ms - sum
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_stages_become_a_row() {
        let out = "FIRST_CALL_MS 120.5\nSTAGE schedule 10 1\nSTAGE compile 90.25 3\n";
        let p = parse(out).unwrap();
        assert_eq!(p.wall_ms, 120.5);
        assert_eq!(p.stages.len(), 2);
        let table = render(&[("W1", "C", p)], false);
        assert!(
            table.contains("| W1 | C | 120.5 | 10.0 (1) | 0.0 (0) |"),
            "{table}"
        );
        assert!(
            table.contains("90.2 (3)") || table.contains("90.3 (3)"),
            "{table}"
        );
        assert!(
            table.trim_end().ends_with("| 20.2 |") || table.trim_end().ends_with("| 20.3 |"),
            "{table}"
        );
    }
}
