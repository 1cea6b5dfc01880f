//! The verdict chart (`bench-verdict.svg`): per workload, Morok's time
//! divided by the fastest peer's warm (the median of warm calls), and
//! Morok's first call (a fresh process, an empty kernel cache) divided by
//! JAX's (else the fastest peer's, see `Report::reference_first_ms`), on
//! a log scale around 1. A bar left of 1 means Morok is faster.

use crate::report::{finish_row_chart, row_chart, Report, RowAxis};
use plotters::prelude::*;
use std::path::Path;

/// Warm and first-call ratio of each row that has one: (label, warm,
/// first call).
fn ratios(report: &Report) -> Vec<(String, Option<f64>, Option<f64>)> {
    report
        .rows
        .iter()
        .map(|row| {
            let id = row.workload.id;
            let warm = row
                .morok_ms
                .zip(report.fastest_peer_ms(id))
                .map(|(m, p)| m / p);
            let first = row
                .first_ms
                .zip(report.reference_first_ms(id))
                .map(|(m, p)| m / p);
            (row.label.clone(), warm, first)
        })
        .filter(|(_, w, f)| w.is_some() || f.is_some())
        .collect()
}

/// Writes the verdict chart to `path` (nothing to compare: a chart that
/// says so).
pub fn chart(report: &Report, path: &Path) -> Result<(), String> {
    let rows = ratios(report);
    let err = |e: &dyn std::fmt::Display| format!("chart {}: {e}", path.display());
    let n = rows.len().max(1);
    let height = 140 + 34 * n as u32;
    let root = SVGBackend::new(path, (960, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let all: Vec<f64> = rows
        .iter()
        .flat_map(|(_, w, f)| [*w, *f])
        .flatten()
        .filter(|v| *v > 0.0)
        .collect();
    let lo = all.iter().cloned().fold(0.5, f64::min) / 1.5;
    let hi = all.iter().cloned().fold(2.0, f64::max) * 1.5;
    let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let axis = RowAxis {
        caption: "Morok ÷ fastest peer, per workload (log scale; left of 1: Morok is faster)",
        range: (lo, hi),
        x_desc: "Morok ms ÷ fastest peer ms",
        x_label: &|v| format!("{v}×"),
    };
    let mut chart = row_chart(&root, &labels, &axis).map_err(|e| err(&e))?;
    let series = [
        ("warm", 0usize, RGBColor(31, 119, 180)),
        ("first call (÷ JAX's)", 1, RGBColor(255, 127, 14)),
    ];
    for (name, k, colour) in series {
        let bars: Vec<Rectangle<(f64, f64)>> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let v = if k == 0 { r.1 } else { r.2 }?;
                // The first workload at the top; warm above first call.
                let top = (n - i) as f64 - 0.15 - 0.35 * k as f64;
                Some(Rectangle::new(
                    [(1.0, top - 0.3), (v, top)],
                    colour.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(1.0, 0.0), (1.0, n as f64)],
            BLACK.stroke_width(2),
        )))
        .map_err(|e| err(&e))?;
    finish_row_chart(&mut chart, &root).map_err(|e| err(&e))
}
