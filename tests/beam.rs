//! Beam search through the facade (`MOROK_BEAM`): a matmul tuned by the
//! search stays equal to the reference, and a second process with the
//! same cache directory takes the tuned opts from disk without searching.

mod common;

use common::{check, child_summary, child_test, input, report, Domain, Layout, Rng};
use morok::{ScalarType, Tensor};
use std::path::Path;

/// The child's work: a small matmul and a row softmax, checked against
/// the reference; prints the beam counters and the kernels' code hashes.
#[test]
fn beam_child() {
    if std::env::var("MOROK_BEAM").is_err() {
        return; // run by `a_second_process_reuses_the_search` only
    }
    let mut rng = Rng::new(11);
    let a = input(
        &mut rng,
        ScalarType::F32,
        &[12, 16],
        Layout::Contiguous,
        Domain::Any,
    );
    let b = input(
        &mut rng,
        ScalarType::F32,
        &[16, 8],
        Layout::Contiguous,
        Domain::Any,
    );
    let mm = a.matmul(&b).expect("matmul");
    check(&mm).expect("matmul under beam search");
    let sm = a.softmax(-1).expect("softmax");
    check(&sm).expect("softmax under beam search");
    let mut codes: Vec<String> = Vec::new();
    for t in [&mm, &sm] {
        let r: Tensor = t.realize().expect("realize");
        for k in r.kernels() {
            codes.push(format!("{}:{}", k.name, k.code.len()));
        }
    }
    report(&format!(
        "beam: searches={} timed={} hits={} kernels={}",
        morok::stats::beam_searches(),
        morok::stats::beam_candidates_timed(),
        morok::stats::beam_cache_hits(),
        codes.join(",")
    ));
}

/// Runs [`beam_child`] in a fresh process with `cache` as its cache
/// directory and returns its summary line.
fn run_child(cache: &Path) -> String {
    let mut cmd = child_test("beam_child");
    cmd.env("MOROK_BEAM", "2")
        .env("MOROK_BEAM_CANDIDATES", "12")
        .env("MOROK_CACHE_DIR", cache)
        .env_remove("MOROK_NOOPT");
    child_summary(cmd, "beam:")
}

/// The value of `name=` in a summary line.
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

#[test]
fn a_second_process_reuses_the_search() {
    if std::env::var("MOROK_BEAM").is_ok() {
        return; // this process is a child
    }
    let cache = std::env::temp_dir().join(format!("morok-beam-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let first = run_child(&cache);
    report(&format!("first run:  {first}"));
    let searches: usize = field(&first, "searches").parse().unwrap();
    assert!(searches >= 2, "{first}");
    assert!(field(&first, "timed").parse::<usize>().unwrap() > searches);
    assert_eq!(field(&first, "hits"), "0", "{first}");
    let entries = std::fs::read_dir(cache.join("beam"))
        .expect("the beam cache directory")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "opts"))
        })
        .count();
    assert_eq!(entries, searches, "one entry per search");

    let second = run_child(&cache);
    report(&format!("second run: {second}"));
    assert_eq!(field(&second, "searches"), "0", "{second}");
    assert_eq!(field(&second, "timed"), "0", "{second}");
    assert_eq!(
        field(&second, "hits"),
        field(&first, "searches"),
        "{second}"
    );
    assert_eq!(field(&second, "kernels"), field(&first, "kernels"));

    // A corrupt entry is ignored: that kernel is searched again.
    let victim = std::fs::read_dir(cache.join("beam"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "opts"))
        .unwrap();
    std::fs::write(&victim, "not an entry").unwrap();
    let third = run_child(&cache);
    report(&format!("corrupt entry: {third}"));
    assert_eq!(field(&third, "searches"), "1", "{third}");
    assert!(std::fs::read_to_string(&victim)
        .unwrap()
        .starts_with("morok-beam"));
    let _ = std::fs::remove_dir_all(&cache);
}

/// The cost of tuning one 1024³ f32 matmul by `MOROK_BEAM=4` on this
/// machine (an empty cache directory, so the search runs); the issue asks
/// for under 60 s. Slow and machine-dependent: run it by hand with
/// `cargo test --release --test beam -- --ignored --nocapture`.
#[test]
#[ignore]
fn beam_search_of_a_1024_matmul_takes_under_a_minute() {
    if std::env::var("MOROK_BEAM").is_ok() {
        return;
    }
    let cache = std::env::temp_dir().join(format!("morok-beam-1024-{}", std::process::id()));
    let mut cmd = child_test("matmul_1024_child");
    cmd.arg("--ignored")
        .env("MOROK_BEAM", "4")
        .env("MOROK_CACHE_DIR", &cache)
        .env_remove("MOROK_NOOPT");
    let line = child_summary(cmd, "matmul 1024:");
    let _ = std::fs::remove_dir_all(&cache);
    report(&line);
    let secs: f64 = field(&line, "search_s").parse().unwrap();
    assert!(secs < 60.0, "{line}");
}

/// The child of the test above: times the first (searching) call and a
/// warm call of a 1024³ matmul.
#[test]
#[ignore]
fn matmul_1024_child() {
    if std::env::var("MOROK_BEAM").is_err() {
        return;
    }
    let mut rng = Rng::new(5);
    let mut data = || {
        (0..1 << 20)
            .map(|_| rng.uniform(-1.0, 1.0) as f32)
            .collect::<Vec<_>>()
    };
    let a = Tensor::from_vec(data(), &[1024, 1024]).unwrap();
    let b = Tensor::from_vec(data(), &[1024, 1024]).unwrap();
    let start = std::time::Instant::now();
    a.matmul(&b).unwrap().realize().unwrap();
    let first = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let c = a.matmul(&b).unwrap().realize().unwrap();
    let warm = start.elapsed().as_secs_f64();
    report(&format!(
        "matmul 1024: search_s={first:.1} warm_ms={:.1} gflops={:.1} searches={} timed={} kernel={}",
        warm * 1e3,
        2.0 * 1024f64.powi(3) / warm / 1e9,
        morok::stats::beam_searches(),
        morok::stats::beam_candidates_timed(),
        c.kernels().last().map_or("?".into(), |k| k.name.clone())
    ));
}
