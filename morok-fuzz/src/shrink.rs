//! Shrinks a failing program: tries smaller programs (fewer outputs, no
//! gradient, steps dropped, input shapes cut) and keeps each one that
//! still fails, until no candidate does or the budget of tries is spent.

use crate::program::{Program, Step};
use serde_json::json;

/// A smaller `program` that still fails (`fails` says whether a candidate
/// does), after at most `budget` candidates tried.
pub fn shrink(
    program: &Program,
    budget: usize,
    mut fails: impl FnMut(&Program) -> bool,
) -> Program {
    let mut best = program.clone();
    let mut tries = 0;
    loop {
        let mut improved = false;
        for candidate in candidates(&best) {
            if tries >= budget {
                return best;
            }
            tries += 1;
            if fails(&candidate) {
                best = candidate;
                improved = true;
                break;
            }
        }
        if !improved {
            return best;
        }
    }
}

/// The programs one simplification away from `p`, the biggest cuts
/// first.
fn candidates(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    if p.gradient {
        out.push(Program {
            gradient: false,
            ..p.clone()
        });
    }
    if p.outputs.len() > 1 {
        for &o in &p.outputs {
            out.push(Program {
                outputs: vec![o],
                ..p.clone()
            });
        }
    }
    for k in (0..p.steps.len()).rev() {
        out.extend(without_step(p, k));
    }
    for (k, s) in p.steps.iter().enumerate() {
        if s.op != "input" && s.op != "index_input" {
            continue;
        }
        let Some(shape) = s.arg["shape"].as_array() else {
            continue;
        };
        for (a, d) in shape.iter().enumerate() {
            let d = d.as_u64().unwrap_or(0);
            for smaller in [1, d / 2, d.saturating_sub(1)] {
                if smaller >= d || (smaller == 0 && d > 0 && a > 0) {
                    continue;
                }
                let mut c = p.clone();
                c.steps[k].arg["shape"][a] = json!(smaller);
                out.push(c);
            }
        }
    }
    out
}

/// `p` without step `k`: its consumers take its first operand instead
/// (none if it has none and is used), later indices move down by one.
fn without_step(p: &Program, k: usize) -> Option<Program> {
    let replacement = p.steps[k].src.first().copied();
    let remap = |i: usize| -> Option<usize> {
        match i.cmp(&k) {
            std::cmp::Ordering::Less => Some(i),
            std::cmp::Ordering::Equal => replacement,
            std::cmp::Ordering::Greater => Some(i - 1),
        }
    };
    let mut steps: Vec<Step> = Vec::with_capacity(p.steps.len() - 1);
    for (i, s) in p.steps.iter().enumerate() {
        if i == k {
            continue;
        }
        let src = s
            .src
            .iter()
            .map(|&j| remap(j))
            .collect::<Option<Vec<_>>>()?;
        steps.push(Step { src, ..s.clone() });
    }
    let mut outputs: Vec<usize> = Vec::new();
    for &o in &p.outputs {
        let o = remap(o)?;
        if !outputs.contains(&o) {
            outputs.push(o);
        }
    }
    if steps.is_empty() || outputs.is_empty() {
        return None;
    }
    Some(Program {
        steps,
        outputs,
        gradient: p.gradient,
    })
}
