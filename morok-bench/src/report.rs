//! The results as a Markdown table (`bench.md`) and a bar chart
//! (`bench.svg`, plotters' SVG backend: no system libraries); the ratio
//! chart is `verdict.rs`.

use crate::limits::Limits;
use crate::peers::{PeerResult, PeerRun, ORDER};
use crate::workloads::{Bound, Work, Workload};
use plotters::prelude::*;
use std::fmt::Write;
use std::path::Path;

/// The horizontal axis of a chart with one row per workload: its
/// caption, its (log-scale) range, name and tick labels.
pub(crate) struct RowAxis<'a> {
    /// The chart's title.
    pub caption: &'a str,
    /// The axis's lowest and highest value.
    pub range: (f64, f64),
    /// The axis's name.
    pub x_desc: &'a str,
    /// A tick's label.
    pub x_label: &'a dyn Fn(&f64) -> String,
}

/// A chart on `root` with one row per label (the first at the top) and
/// the log-scale `axis`, its mesh drawn: the frame both bar charts share.
pub(crate) fn row_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    labels: &[String],
    axis: &RowAxis<'_>,
) -> Result<
    ChartContext<
        'a,
        SVGBackend<'b>,
        Cartesian2d<LogCoord<f64>, plotters::coord::types::RangedCoordf64>,
    >,
    String,
> {
    let n = labels.len().max(1);
    let (lo, hi) = axis.range;
    let mut chart = ChartBuilder::on(root)
        .caption(axis.caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(250)
        .build_cartesian_2d((lo..hi).log_scale(), 0f64..n as f64)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n * 2 + 1)
        .y_label_formatter(&|y| row_label(labels, *y))
        .x_label_formatter(axis.x_label)
        .x_desc(axis.x_desc)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Draws the legend of a [`row_chart`] (lower right) and writes the file.
pub(crate) fn finish_row_chart<'a, 'b: 'a>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'b>,
        Cartesian2d<LogCoord<f64>, plotters::coord::types::RangedCoordf64>,
    >,
    root: &DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// The label of the chart row whose band holds `y` (rows of height 1,
/// the first at the top), at the band's centre only.
pub(crate) fn row_label(labels: &[String], y: f64) -> String {
    let n = labels.len();
    let i = y.floor() as usize;
    let centre = (y - y.floor() - 0.5).abs() < 1e-6;
    match labels.get(n.wrapping_sub(i + 1)) {
        Some(l) if centre => l.clone(),
        _ => String::new(),
    }
}

/// Morok's figures for one workload.
#[derive(Clone, Debug)]
pub struct Row {
    /// The workload.
    pub workload: Workload,
    /// Its label with the size that ran.
    pub label: String,
    /// Its work at the size that ran.
    pub work: Work,
    /// Median of the warm calls (none when it failed).
    pub morok_ms: Option<f64>,
    /// The timed warm calls, ms (of both passes when the peers ran).
    pub samples: Vec<f64>,
    /// Timed warm calls.
    pub runs: usize,
    /// Per-process medians when the workload ran in several rounds of
    /// fresh processes (`rounds.rs`): the main process's first, and
    /// `morok_ms` is their median. Empty otherwise.
    pub rounds: Vec<f64>,
    /// First call in a fresh process with an empty kernel cache.
    pub first_ms: Option<f64>,
    /// The same on the LLVM device (a build with the `llvm` feature whose
    /// default device is the C one); `None` otherwise.
    pub llvm_first_ms: Option<f64>,
    /// Why the workload or its check failed.
    pub error: Option<String>,
}

/// Everything one invocation measured.
pub struct Report<'a> {
    /// Morok's rows, in table order.
    pub rows: &'a [Row],
    /// The machine's limits, when they could be measured.
    pub limits: Option<Limits>,
    /// What the peers gave.
    pub peers: &'a PeerRun,
    /// Lines about the run (date, CPU, load, note).
    pub about: Vec<String>,
    /// How long the run and each peer took.
    pub took: String,
}

impl Report<'_> {
    /// The limit a workload is compared with, with its name.
    fn limit(&self, w: &Workload) -> Option<(f64, &'static str)> {
        let l = self.limits?;
        Some(match w.bound() {
            Bound::Read => (l.read_gbs, "read"),
            Bound::Copy => (l.copy_gbs, "copy"),
            Bound::Triad => (l.triad_gbs, "triad"),
            Bound::Fma => (l.fma_gflops, "FMA"),
        })
    }

    /// The peers with at least one result, in table order.
    fn peer_columns(&self) -> Vec<&'static str> {
        ORDER
            .iter()
            .copied()
            .filter(|p| self.peers.results.iter().any(|r| r.peer == *p))
            .collect()
    }

    /// A peer's fastest variant on a workload.
    fn best(&self, peer: &str, workload: &str) -> Option<&PeerResult> {
        self.peers
            .results
            .iter()
            .filter(|r| r.peer == peer && r.workload == workload)
            .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms))
    }

    /// The fastest peer's warm median on workload `id` (any variant).
    pub(crate) fn fastest_peer_ms(&self, id: &str) -> Option<f64> {
        self.peer_columns()
            .into_iter()
            .filter_map(|p| self.best(p, id))
            .map(|r| r.median_ms)
            .min_by(f64::total_cmp)
    }

    /// The first call Morok's is compared with on workload `id`: JAX's
    /// (its fastest variant's; a compiler, as Morok is, and the peer the
    /// first-call goal names), else the fastest first call of any peer
    /// variant (ONNX Runtime's session creation and run for W10).
    pub(crate) fn reference_first_ms(&self, id: &str) -> Option<f64> {
        let first = |peer: Option<&str>| {
            self.peers
                .results
                .iter()
                .filter(|r| r.workload == id && peer.is_none_or(|p| r.peer == p))
                .filter_map(|r| r.first_ms)
                .min_by(f64::total_cmp)
        };
        first(Some("jax")).or_else(|| first(None))
    }

    /// The Markdown document.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Morok bench\n\n");
        for line in &self.about {
            let _ = writeln!(s, "- {line}");
        }
        if let Some(l) = self.limits {
            let _ = writeln!(
                s,
                "- machine limits ({} threads): read {:.1} GB/s, copy {:.1} GB/s, triad {:.1} GB/s \
                 (with ordinary stores: copy {:.1}, triad {:.1}), \
                 FMA peak {:.0} GFLOP/s ({}-bit vectors)",
                l.threads,
                l.read_gbs,
                l.copy_gbs,
                l.triad_gbs,
                l.copy_cached_gbs,
                l.triad_cached_gbs,
                l.fma_gflops,
                l.vector_bits
            );
        }
        let _ = writeln!(s, "- {}", self.took);
        s.push_str(
            "\nfloat32, median of warm calls. Rate: GB/s of compulsory traffic or GFLOP/s; \
             % of limit: of the read, copy or triad bandwidth, or of the FMA peak. \
             First call: a fresh process with an empty kernel cache. Peer cells: the peer's \
             fastest variant in ms, and (Morok ms ÷ peer ms): below 1 means Morok is faster. \
             The last column divides Morok's first call by JAX's (its trace and compile \
             plus one run), or where JAX has none by the fastest first call a peer variant \
             timed (W10: ONNX Runtime's session creation plus one run); \
             `bench-verdict.svg` charts both ratios. Where the LLVM device was built in, \
             its first call (same process setup, `MOROK_DEVICE=LLVM`) and its ratio to \
             JAX's are the last two columns.\n\n",
        );
        let peers = self.peer_columns();
        let llvm = self.rows.iter().any(|r| r.llvm_first_ms.is_some());
        let mut head = String::from("| workload | Morok ms | rate | % of limit | first call ms |");
        let mut rule = String::from("|---|---:|---:|---:|---:|");
        for p in &peers {
            let _ = write!(head, " {p} ms |");
            rule.push_str("---:|");
        }
        head.push_str(" Morok ÷ fastest peer | first call ÷ JAX's |");
        rule.push_str("---:|---:|");
        if llvm {
            head.push_str(" LLVM first call ms | LLVM first call ÷ JAX's |");
            rule.push_str("---:|---:|");
        }
        let _ = writeln!(s, "{head}\n{rule}");
        for row in self.rows {
            let id = row.workload.id;
            let (time, rate, pct) = match row.morok_ms {
                Some(ms) => {
                    let (r, unit) = row.work.rate(ms);
                    let pct = self
                        .limit(&row.workload)
                        .map(|(l, name)| format!("{:.0}% {name}", 100.0 * r / l))
                        .unwrap_or_else(|| "–".into());
                    (fmt_ms(ms), format!("{r:.1} {unit}"), pct)
                }
                None => ("failed".into(), "–".into(), "–".into()),
            };
            let first = row.first_ms.map(fmt_ms).unwrap_or_else(|| "–".into());
            let _ = write!(s, "| {} | {time} | {rate} | {pct} | {first} |", row.label);
            let mut fastest: Option<f64> = None;
            for p in &peers {
                match self.best(p, id) {
                    Some(r) => {
                        fastest = Some(fastest.map_or(r.median_ms, |f| f.min(r.median_ms)));
                        let ratio = row
                            .morok_ms
                            .map(|m| format!(" ({})", fmt_ratio(m / r.median_ms)))
                            .unwrap_or_default();
                        let _ = write!(s, " {}{ratio} |", fmt_ms(r.median_ms));
                    }
                    None => s.push_str(" – |"),
                }
            }
            match (row.morok_ms, fastest) {
                (Some(m), Some(f)) => {
                    let _ = write!(s, " {} |", fmt_ratio(m / f));
                }
                _ => s.push_str(" – |"),
            }
            let reference = self.reference_first_ms(id);
            let ratio = |first: Option<f64>| match (first, reference) {
                (Some(m), Some(f)) => fmt_ratio(m / f),
                _ => "–".into(),
            };
            let _ = write!(s, " {} |", ratio(row.first_ms));
            if llvm {
                let ms = row.llvm_first_ms.map(fmt_ms).unwrap_or_else(|| "–".into());
                let _ = write!(s, " {ms} | {} |", ratio(row.llvm_first_ms));
            }
            s.push('\n');
        }
        self.rounds_table(&mut s);
        let errors: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| Some(format!("{}: {}", r.workload.id, r.error.as_ref()?)))
            .collect();
        if !errors.is_empty() {
            s.push_str("\nFailures:\n\n");
            for e in errors {
                let _ = writeln!(s, "- {e}");
            }
        }
        if !self.peers.skipped.is_empty() {
            s.push_str("\nPeers skipped or failed:\n\n");
            for e in &self.peers.skipped {
                let _ = writeln!(s, "- {e}");
            }
        }
        if !self.peers.results.is_empty() {
            s.push_str(
                "\nEvery peer variant (median ms, over the rounds where there were several; \
                 ✗ marks a failed correctness check):\n\n",
            );
            s.push_str(
                "| peer | variant | workload | ms | first call ms | per round |\n\
                 |---|---|---|---:|---:|---|\n",
            );
            let mut all: Vec<&PeerResult> = self.peers.results.iter().collect();
            all.sort_by(|a, b| (&a.workload, &a.peer).cmp(&(&b.workload, &b.peer)));
            for r in all {
                let bad = if r.correct == Some(false) { " ✗" } else { "" };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {}{bad} | {} | {} |",
                    r.peer,
                    r.variant.replace('|', "\\|"),
                    r.workload,
                    fmt_ms(r.median_ms),
                    r.first_ms.map(fmt_ms).unwrap_or_else(|| "–".into()),
                    fmt_rounds(&r.rounds)
                );
            }
        }
        s
    }

    /// The per-round figures of the workloads that ran in several rounds of
    /// fresh processes: Morok's and the fastest peer's (by its median over
    /// the rounds).
    fn rounds_table(&self, s: &mut String) {
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.rounds.len() > 1).collect();
        if rows.is_empty() {
            return;
        }
        s.push_str(
            "\nRounds of fresh processes (per-process median ms, in round order; the table \
             above gives each side's median over the rounds):\n\n\
             | workload | Morok | fastest peer | its rounds |\n|---|---|---|---|\n",
        );
        for row in rows {
            let id = row.workload.id;
            let best = self
                .peer_columns()
                .into_iter()
                .filter_map(|p| self.best(p, id))
                .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
            let (name, rounds) = match best {
                Some(b) => (format!("{} {}", b.peer, b.variant), fmt_rounds(&b.rounds)),
                None => ("–".into(), "–".into()),
            };
            let _ = writeln!(
                s,
                "| {id} | {} | {} | {rounds} |",
                fmt_rounds(&row.rounds),
                name.replace('|', "\\|")
            );
        }
    }

    /// Writes the bar chart: per workload, Morok's and each peer's median
    /// (log scale, ms).
    pub fn chart(&self, path: &Path) -> Result<(), String> {
        let series: Vec<&str> = std::iter::once("morok")
            .chain(self.peer_columns())
            .collect();
        let value = |series: &str, row: &Row| -> Option<f64> {
            if series == "morok" {
                row.morok_ms
            } else {
                self.best(series, row.workload.id).map(|r| r.median_ms)
            }
        };
        let values: Vec<f64> = self
            .rows
            .iter()
            .flat_map(|row| series.iter().filter_map(move |s| value(s, row)))
            .filter(|v| *v > 0.0)
            .collect();
        let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = values.iter().cloned().fold(0.0, f64::max);
        let (lo, hi) = if values.is_empty() {
            (0.01, 1.0)
        } else {
            (10f64.powf((lo / 2.0).log10().floor()), hi * 5.0)
        };
        let n = self.rows.len();
        let height = 120 + 11 * n as u32 * (series.len() as u32 + 1);
        let err = |e: &dyn std::fmt::Display| format!("chart {}: {e}", path.display());
        let root = SVGBackend::new(path, (960, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let labels: Vec<String> = self.rows.iter().map(|r| r.label.clone()).collect();
        let axis = RowAxis {
            caption:
                "Morok and peers: median warm time per call, ms (log scale; shorter is faster)",
            range: (lo, hi),
            x_desc: "ms",
            x_label: &|v| {
                if *v >= 1.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v}")
                }
            },
        };
        let mut chart = row_chart(&root, &labels, &axis).map_err(|e| err(&e))?;
        let band = 0.8 / series.len() as f64;
        for (k, s) in series.iter().enumerate() {
            let colour = Palette99::pick(k).to_rgba();
            let bars: Vec<Rectangle<(f64, f64)>> = self
                .rows
                .iter()
                .enumerate()
                .filter_map(|(i, row)| {
                    let v = value(s, row)?;
                    // The first workload at the top.
                    let top = (n - i) as f64 - 0.1 - band * k as f64;
                    Some(Rectangle::new(
                        [(lo, top - band), (v, top)],
                        colour.filled(),
                    ))
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(|e| err(&e))?
                .label(*s)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        finish_row_chart(&mut chart, &root).map_err(|e| err(&e))
    }
}

/// Milliseconds with three significant figures.
fn fmt_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

/// Per-round figures as `a / b / c` (`–` when there was one round).
fn fmt_rounds(rounds: &[f64]) -> String {
    if rounds.len() < 2 {
        return "–".into();
    }
    rounds
        .iter()
        .map(|&ms| fmt_ms(ms))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// A time ratio with two significant figures.
fn fmt_ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.2}×")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::ALL;

    fn sample() -> (Vec<Row>, PeerRun) {
        let w = ALL[5];
        let rows = vec![Row {
            workload: w,
            label: w.label(false),
            work: w.work(false),
            morok_ms: Some(20.0),
            samples: vec![20.0],
            runs: 3,
            rounds: vec![],
            first_ms: Some(100.0),
            llvm_first_ms: Some(40.0),
            error: None,
        }];
        let peers = PeerRun {
            results: vec![
                PeerResult {
                    peer: "numpy".into(),
                    variant: "plain".into(),
                    workload: "W4a".into(),
                    median_ms: 10.0,
                    correct: Some(true),
                    first_ms: None,
                    rounds: vec![],
                },
                PeerResult {
                    peer: "jax".into(),
                    variant: "jit".into(),
                    workload: "W4a".into(),
                    median_ms: 40.0,
                    correct: Some(true),
                    first_ms: Some(50.0),
                    rounds: vec![],
                },
            ],
            ..PeerRun::default()
        };
        (rows, peers)
    }

    fn report<'a>(rows: &'a [Row], peers: &'a PeerRun) -> Report<'a> {
        Report {
            rows,
            limits: None,
            peers,
            about: vec![],
            took: String::new(),
        }
    }

    #[test]
    fn table_has_the_ratios() {
        let (rows, peers) = sample();
        let md = report(&rows, &peers).markdown();
        let line = md.lines().find(|l| l.starts_with("| W4a")).unwrap();
        assert!(line.contains("| 20.0 | 107.4 GFLOP/s |"), "{line}");
        assert!(
            line.contains("| 10.0 (2.00×) | 40.0 (0.50×) | 2.00× | 2.00× | 40.0 | 0.80× |"),
            "{line}"
        );
        assert!(
            md.contains("| LLVM first call ms | LLVM first call ÷ JAX's |"),
            "{md}"
        );
        // JAX's first call (50 ms) in the variants' table
        assert!(md.contains("| jax | jit | W4a | 40.0 | 50.0 |"), "{md}");
    }

    #[test]
    fn verdict_chart_is_written() {
        let (rows, peers) = sample();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verdict.svg");
        crate::verdict::chart(&report(&rows, &peers), &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("first call"),
            "{svg}"
        );
    }

    #[test]
    fn rounds_are_listed_for_rows_that_had_them() {
        let (mut rows, mut peers) = sample();
        let md = report(&rows, &peers).markdown();
        assert!(!md.contains("Rounds of fresh processes"));
        rows[0].rounds = vec![20.0, 30.0, 25.0];
        peers.results[0].rounds = vec![10.0, 12.0, 9.0];
        let md = report(&rows, &peers).markdown();
        let line = md
            .lines()
            .find(|l| l.starts_with("| W4a | 20.0 / 30.0"))
            .unwrap();
        assert_eq!(
            line,
            "| W4a | 20.0 / 30.0 / 25.0 | numpy plain | 10.0 / 12.0 / 9.00 |"
        );
    }

    #[test]
    fn chart_is_an_svg() {
        let (rows, peers) = sample();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.svg");
        report(&rows, &peers).chart(&path).unwrap();
        let svg = std::fs::read_to_string(path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("numpy"));
    }
}
