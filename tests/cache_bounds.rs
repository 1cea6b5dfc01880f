//! Bounded caches: a process that realizes ever new shapes keeps its
//! kernel and schedule caches at their limit, and its resident memory and
//! memory mappings bounded (evicted kernels' code is unloaded), on every
//! CPU device this build has.
//!
//! `MOROK_CACHE_TEST_SHAPES=N` sets how many distinct shapes each device
//! realizes (default 400; `docs/RELIABILITY.md` gives a long run's
//! figures), `MOROK_CACHE_TEST_DEVICES=LLVM` (comma-separated names) the
//! devices.

mod common;

use morok::{Device, Tensor};

/// Kernels the caches may hold during the test.
const LIMIT: usize = 24;

/// A field of `/proc/self/status` in kB (`VmRSS`, ...).
fn status_kb(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// How many memory mappings the process has.
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .expect("read /proc/self/maps")
        .lines()
        .count()
}

/// Realizes `sum(x·x + 1)` over the first `n` elements of `x` (a new
/// kernel for every new `n`; one input buffer and scalar outputs, so the
/// device's buffer pool does not grow with the shapes) and checks the
/// value.
fn realize_shape(x: &Tensor, n: usize) {
    let x = x.shrink(&[(0, n)]).expect("shrink");
    let y = (&(&x * &x) + 1.0f32)
        .sum(None, false)
        .expect("sum")
        .realize()
        .expect("realize");
    let got = y.to_vec::<f32>().expect("to_vec")[0];
    assert_eq!(got, 5.0 * n as f32, "sum over {n} elements");
}

fn shapes() -> usize {
    std::env::var("MOROK_CACHE_TEST_SHAPES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

/// Realizes `shapes()` distinct shapes on `device` after a warm-up and
/// checks caches, memory and mappings.
fn bounded_on(device: &Device) {
    let warm = 100;
    let total = shapes();
    let x = Tensor::from_slice(&vec![2.0f32; warm + total])
        .to_device(device)
        .expect("to_device");
    for n in 1..=warm {
        realize_shape(&x, n);
    }
    let pooled = || morok::stats::cpu_pooled_bytes() as u64 / 1024;
    let (rss0, maps0, pool0) = (status_kb("VmRSS"), mappings(), pooled());
    for n in warm + 1..=warm + total {
        realize_shape(&x, n);
        assert!(morok::stats::kernel_cache_len() <= LIMIT);
        assert!(morok::stats::schedule_cache_len() <= LIMIT);
    }
    let (rss1, maps1, pool1) = (status_kb("VmRSS"), mappings(), pooled());
    let rss_growth = rss1.saturating_sub(rss0);
    let maps_growth = maps1.saturating_sub(maps0);
    // Freed buffers kept for reuse are bounded by the pool's own limit
    // (256 MiB): what the caches must keep flat is the rest.
    let pool_growth = pool1.saturating_sub(pool0);
    let other_growth = rss_growth.saturating_sub(pool_growth);
    eprintln!(
        "{}: {total} new shapes after {warm}: RSS {rss0} -> {rss1} kB (+{rss_growth}; \
         buffer pool {pool0} -> {pool1} kB), mappings {maps0} -> {maps1} (+{maps_growth})",
        device.name()
    );
    // Kept, every kernel would add its code's mappings (a loaded library
    // maps 4 or 5 regions) and tens of kB; bounded, the growth is noise.
    assert!(
        maps_growth < 64,
        "{}: mappings grew by {maps_growth} over {total} new shapes",
        device.name()
    );
    assert!(
        other_growth < 48 * 1024,
        "{}: RSS grew by {other_growth} kB beside the buffer pool over {total} new shapes",
        device.name()
    );
}

#[test]
fn new_shapes_keep_caches_memory_and_mappings_bounded() {
    morok::set_kernel_cache_limit(LIMIT);
    assert_eq!(morok::kernel_cache_limit(), LIMIT);
    let devices: Vec<Device> = match std::env::var("MOROK_CACHE_TEST_DEVICES") {
        Ok(names) => names
            .split(',')
            .map(|n| Device::get(n.trim()).expect("a device named in MOROK_CACHE_TEST_DEVICES"))
            .collect(),
        Err(_) => {
            let mut d = vec![Device::get("CPU").expect("CPU device")];
            d.extend(Device::get("LLVM").ok());
            d
        }
    };
    for d in &devices {
        bounded_on(d);
    }
}

/// The variable that makes this binary's child run the beam searches.
const BEAM_CHILD: &str = "MOROK_CACHE_TEST_BEAM_CHILD";

/// Beam searches over matmuls of new shapes until `candidates` (from
/// `MOROK_CACHE_TEST_CANDIDATES`, default 150) candidate kernels have been
/// built and timed: every candidate is a compiled kernel that must be
/// freed once the search moves on. Runs in a child with a fresh cache
/// directory (searches are cached on disk).
#[test]
fn beam_candidates_are_freed() {
    if std::env::var(BEAM_CHILD).is_ok() {
        let target: usize = std::env::var("MOROK_CACHE_TEST_CANDIDATES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(150);
        morok::set_kernel_cache_limit(LIMIT);
        morok::set_opt_mode(Some(morok::OptMode::Beam(morok::BeamConfig {
            max_candidates: 12,
            ..morok::BeamConfig::new(2)
        })));
        let matmul = |n: usize| -> morok::Result<()> {
            let a = Tensor::full(&[n, 24], 1.0f32).realize()?;
            let b = Tensor::full(&[24, n + 1], 2.0f32).realize()?;
            let c = a.dot(&b)?.realize()?.to_vec::<f32>()?;
            assert!(c.iter().all(|&v| v == 48.0), "matmul {n}");
            Ok(())
        };
        let mut n = 8;
        // Warm up until the kernel cache is full (the kernels it keeps
        // hold their code) and some searches ran.
        while morok::stats::kernel_cache_len() < LIMIT
            || morok::stats::beam_candidates_timed() < target / 5
        {
            matmul(n).expect("warm-up");
            n += 1;
        }
        let (rss0, maps0, timed0) = (
            status_kb("VmRSS"),
            mappings(),
            morok::stats::beam_candidates_timed(),
        );
        while morok::stats::beam_candidates_timed() < timed0 + target {
            matmul(n).expect("search");
            n += 1;
        }
        let (rss1, maps1) = (status_kb("VmRSS"), mappings());
        common::report(&format!(
            "BEAM {} candidates: RSS {rss0} -> {rss1} kB (+{}), mappings {maps0} -> {maps1} (+{})",
            morok::stats::beam_candidates_timed() - timed0,
            rss1.saturating_sub(rss0),
            maps1.saturating_sub(maps0)
        ));
        assert!(maps1.saturating_sub(maps0) < 64, "mappings grew");
        assert!(rss1.saturating_sub(rss0) < 48 * 1024, "RSS grew");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = common::child_test("beam_candidates_are_freed");
    child
        .env(BEAM_CHILD, "1")
        .env("MOROK_CACHE_DIR", dir.path());
    eprintln!("{}", common::child_summary(child, "BEAM"));
}
