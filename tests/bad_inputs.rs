//! The bad-input catalogue for the entry points beside the `Tensor` ops
//! (those are `tests/no_panic.rs`; ONNX files are morok-onnx's
//! `tests/bad_input.rs`): `MOROK_*` environment variables with garbage
//! values, device selection, sizes too large to allocate, data of the
//! wrong length, DSL arguments of the wrong shape, and truncated or
//! malicious safetensors files.
//!
//! Each case runs under `catch_unwind` (the environment cases in a child
//! process, so an abort counts too) and must end as the table says: an
//! `Err` that names the op and the line of this file that made the call,
//! or, for a setting, the right result plus one warning naming the
//! variable. The test prints the number of cases and fails listing every
//! case that ended otherwise.

mod common;

use morok::dsl::model;
use morok::{DType, Device, Error, Tensor};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The outcome of one case: `Ok` when it ended as the table says, else
/// what happened instead.
type Outcome = Result<(), String>;

/// Checks that `result` is an `Err` for `op` made at a line of this file,
/// whose message contains every one of `words`.
fn refused<T>(result: morok::Result<T>, op: &str, words: &[&str]) -> Outcome {
    let e = match result {
        Ok(_) => return Err("succeeded".into()),
        Err(e) => e,
    };
    check_error(&e, op, words)
}

/// The checks of [`refused`] on the error `e`.
fn check_error(e: &Error, op: &str, words: &[&str]) -> Outcome {
    let text = e.to_string();
    if e.op() != op {
        return Err(format!("names op `{}`, not `{op}`: {text}", e.op()));
    }
    if !e.location().file().ends_with("bad_inputs.rs") {
        return Err(format!(
            "points at {}, not the caller: {text}",
            e.location()
        ));
    }
    match words.iter().find(|w| !text.contains(*w)) {
        Some(w) => Err(format!("does not say `{w}`: {text}")),
        None => Ok(()),
    }
}

/// Runs every case of `cases`, each under `catch_unwind`, and returns
/// `(cases run, problems)`.
fn run_cases(cases: Vec<(String, Box<dyn FnOnce() -> Outcome + '_>)>) -> (usize, Vec<String>) {
    let n = cases.len();
    let problems = cases
        .into_iter()
        .filter_map(|(name, case)| match catch_unwind(AssertUnwindSafe(case)) {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(format!("{name}: {why}")),
            Err(p) => Some(format!(
                "{name}: panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        })
        .collect();
    (n, problems)
}

/// Boxes a case for [`run_cases`].
fn case<'a>(
    name: impl Into<String>,
    f: impl FnOnce() -> Outcome + 'a,
) -> (String, Box<dyn FnOnce() -> Outcome + 'a>) {
    (name.into(), Box::new(f))
}

/// The child process of [`environment_settings`]: realizes a small sum
/// under whatever environment the parent set and reports the outcome.
#[test]
#[ignore = "started by environment_settings in a child process"]
fn env_child() {
    let run = || -> morok::Result<f32> {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
        let s = (&(&t * 2.0) + 1.0).sum(None, false)?;
        Ok(s.to_vec::<f32>()?[0])
    };
    match run() {
        Ok(v) => common::report(&format!("env child: ok {v}")),
        Err(e) => common::report(&format!(
            "env child: err {} at {}: {e}",
            e.op(),
            e.location()
        )),
    }
}

/// What a garbage setting must do.
enum Expect {
    /// The computation succeeds, and stderr has a warning containing this.
    Warns(&'static str),
    /// The computation is an `Err` containing this.
    Fails(&'static str),
}

#[test]
fn environment_settings() {
    let shared_cache = tempfile::tempdir().unwrap();
    let fresh_cache = tempfile::tempdir().unwrap();
    let not_a_dir = shared_cache.path().join("a-file");
    std::fs::write(&not_a_dir, b"not a directory").unwrap();
    let not_a_dir = not_a_dir.to_str().unwrap().to_string();
    let warn = |name: &'static str| Expect::Warns(name);
    #[rustfmt::skip]
    let table: Vec<(Vec<(&str, &str)>, Expect)> = vec![
        (vec![("MOROK_BEAM", "four")], warn("MOROK_BEAM")),
        (vec![("MOROK_BEAM", "-2")], warn("MOROK_BEAM")),
        (vec![("MOROK_BEAM", "1"), ("MOROK_BEAM_CANDIDATES", "lots")], warn("MOROK_BEAM_CANDIDATES")),
        (vec![("MOROK_KERNEL_CACHE", "0")], warn("MOROK_KERNEL_CACHE")),
        (vec![("MOROK_KERNEL_CACHE", "1e9")], warn("MOROK_KERNEL_CACHE")),
        (vec![("MOROK_NOOPT", "maybe")], warn("MOROK_NOOPT")),
        (vec![("MOROK_DEBUG", "verbose")], warn("MOROK_DEBUG")),
        (vec![("MOROK_DEBUG", "1,,x")], warn("MOROK_DEBUG")),
        (vec![("MOROK_THREADS", "many")], warn("MOROK_THREADS")),
        (vec![("MOROK_THREADS", "0")], warn("MOROK_THREADS")),
        (vec![("MOROK_THREADS", "99999999999999999999999")], warn("MOROK_THREADS")),
        (vec![("MOROK_CPU_VECTOR_BYTES", "24")], warn("MOROK_CPU_VECTOR_BYTES")),
        (vec![("MOROK_CPU_VECTOR_BYTES", "avx2")], warn("MOROK_CPU_VECTOR_BYTES")),
        (vec![("MOROK_HUGE_PAGES", "always")], warn("MOROK_HUGE_PAGES")),
        (vec![("MOROK_SANITIZE", "perhaps")], warn("MOROK_SANITIZE")),
        (vec![("MOROK_CACHE_DIR", "/dev/null/morok")], warn("cannot be used")),
        (vec![("MOROK_CACHE_DIR", &not_a_dir)], warn("cannot be used")),
        (vec![("MOROK_DEVICE", "TPU")], Expect::Fails("unknown device `TPU`")),
        (vec![("MOROK_DEVICE", "\u{1F600}")], Expect::Fails("unknown device")),
        (
            vec![("MOROK_CACHE_DIR", fresh_cache.path().to_str().unwrap()), ("MOROK_CC", "/nonexistent/cc")],
            Expect::Fails("/nonexistent/cc"),
        ),
    ];
    let mut problems = Vec::new();
    for (env, expect) in &table {
        let mut cmd = common::child_test("env_child");
        cmd.arg("--include-ignored");
        for var in [
            "MOROK_BEAM",
            "MOROK_NOOPT",
            "MOROK_DEBUG",
            "MOROK_DEVICE",
            "MOROK_SANITIZE",
            "MOROK_CC",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("MOROK_CACHE_DIR", shared_cache.path());
        cmd.envs(env.iter().copied());
        let out = cmd.output().expect("starting the child test");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let result = stderr.lines().find(|l| l.starts_with("env child: "));
        let problem = match (out.status.success(), result, expect) {
            (false, _, _) => Some(format!("the child failed ({}): {stderr}", out.status)),
            (true, None, _) => Some(format!("no result: {stderr}")),
            (true, Some(r), Expect::Warns(w)) => {
                let warned = stderr
                    .lines()
                    .any(|l| l.starts_with("morok: warning:") && l.contains(w));
                if r != "env child: ok 24" {
                    Some(format!("wrong result: {r}"))
                } else if !warned {
                    Some(format!("no warning containing `{w}`: {stderr}"))
                } else {
                    None
                }
            }
            (true, Some(r), Expect::Fails(w)) => (!(r.starts_with("env child: err ")
                && r.contains(w)
                && r.contains("bad_inputs.rs")))
            .then(|| format!("expected an error containing `{w}` at this file: {r}")),
        };
        if let Some(p) = problem {
            problems.push(format!("{env:?}: {p}"));
        }
    }
    common::report(&format!(
        "bad inputs, environment: {} cases, {} problems",
        table.len(),
        problems.len()
    ));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A DSL kernel with a fixed and two named dims.
#[morok::kernel]
fn scale(x: Tensor<f32, N, 4>, w: Tensor<f32, 4, M>) -> Tensor<f32, N, M> {
    x.dot(w)
}

#[test]
fn devices_sizes_data_and_dsl_arguments() {
    let small = || Tensor::from_vec(vec![1.0f32; 8], &[2, 4]).unwrap();
    let cases = vec![
        case("unknown device", || {
            refused(Device::get("GPU7"), "device", &["GPU7", "CPU"])
        }),
        case("empty device name", || {
            refused(Device::get(""), "device", &["the devices are"])
        }),
        case("moving to an unknown device", || {
            refused(
                Device::get("NPU").and_then(|d| small().to_device(&d)),
                "device",
                &["NPU"],
            )
        }),
        case("4 TiB of zeros", || {
            refused(
                Tensor::zeros(&[1 << 40], DType::F32).realize(),
                "realize",
                &[],
            )
        }),
        case("random values past memory", || {
            refused(
                Tensor::rand(&[1 << 20, 1 << 19], DType::F32).realize(),
                "realize",
                &[],
            )
        }),
        case("random values past what can be counted", || {
            refused(
                Tensor::rand(&[1 << 22, 1 << 22], DType::F32).realize(),
                "rand",
                &["2^40"],
            )
        }),
        case("an element count past usize", || {
            refused(
                Tensor::zeros(&[1 << 40, 1 << 40], DType::F32).realize(),
                "zeros",
                &["too many elements"],
            )
        }),
        case("an empty tensor past memory", || {
            refused(
                Tensor::empty(&[1 << 41], DType::F64).realize(),
                "realize",
                &[],
            )
        }),
        case("data shorter than the shape", || {
            refused(
                Tensor::from_vec(vec![1.0f32; 5], &[2, 3]),
                "from_vec",
                &["5", "[2, 3]"],
            )
        }),
        case("data longer than the shape", || {
            refused(
                Tensor::from_vec(vec![1i32; 7], &[2, 3]),
                "from_vec",
                &["7", "[2, 3]"],
            )
        }),
        case("reading back as the wrong type", || {
            refused(small().to_vec::<i64>(), "to_vec", &["f32", "i64"])
        }),
        case("DSL: a fixed dim of the wrong size", || {
            let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
            let w = Tensor::from_vec(vec![1.0f32; 8], &[4, 2]).unwrap();
            refused(scale(&x, &w), "scale", &["x", "3", "4"])
        }),
        case("DSL: named dims that disagree", || {
            let w = Tensor::from_vec(vec![1.0f32; 12], &[3, 4]).unwrap();
            refused(scale(&small(), &w), "scale", &["w", "3", "4"])
        }),
        case("DSL: the wrong rank", || {
            let x = Tensor::from_vec(vec![1.0f32; 4], &[4]).unwrap();
            let w = Tensor::from_vec(vec![1.0f32; 8], &[4, 2]).unwrap();
            refused(scale(&x, &w), "scale", &["x"])
        }),
        case("DSL: the wrong dtype", || {
            let x = Tensor::from_vec(vec![1i32; 8], &[2, 4]).unwrap();
            let w = Tensor::from_vec(vec![1.0f32; 8], &[4, 2]).unwrap();
            refused(scale(&x, &w), "scale", &["x", "i32"])
        }),
        case("DSL: a zero-size batch", || {
            let x = Tensor::from_vec(Vec::<f32>::new(), &[0, 4]).unwrap();
            let w = Tensor::from_vec(vec![1.0f32; 8], &[4, 2]).unwrap();
            match scale(&x, &w).and_then(|y| y.realize()) {
                Ok(y) if y.shape() == [0, 2] => Ok(()),
                Ok(y) => Err(format!("shape {:?}", y.shape())),
                Err(e) => Err(format!("refused a valid empty batch: {e}")),
            }
        }),
    ];
    let (n, problems) = run_cases(cases);
    common::report(&format!(
        "bad inputs, devices/sizes/data/DSL: {n} cases, {} problems",
        problems.len()
    ));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

model! {
    struct Tiny { fc: Linear(4 -> 3) }
    fn forward(x: f32[B, 4]) -> f32[B, 3] { fc(x) }
}

/// A safetensors file of `header` (JSON, its length prefixed as the
/// format says) followed by `data`.
fn safetensors_bytes(header: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// Writes `bytes` to `dir/name` and loads a [`Tiny`] from it.
fn load_from(dir: &Path, name: &str, bytes: &[u8]) -> morok::Result<Tiny> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    Tiny::load_safetensors(&path)
}

#[test]
fn safetensors_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.safetensors");
    Tiny::new(7).unwrap().save_safetensors(&good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let data = vec![0u8; 60];
    let w = r#""fc.weight":{"dtype":"F32","shape":[3,4],"data_offsets":[0,48]}"#;
    let b = r#""fc.bias":{"dtype":"F32","shape":[3],"data_offsets":[48,60]}"#;
    let with = |fields: &str| format!("{{{fields}}}");
    let d = dir.path();
    let load = |name: &str, bytes: Vec<u8>| load_from(d, name, &bytes);
    let loads = |name: &'static str, bytes: Vec<u8>, words: &'static [&'static str]| {
        case(name, move || {
            refused(load(name, bytes), "load_safetensors", words)
        })
    };
    let mut cases = vec![
        case("the good file loads", || {
            load("copy", bytes.clone())
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
        case("a missing file", || {
            refused(
                Tiny::load_safetensors(d.join("absent")),
                "load_safetensors",
                &["absent"],
            )
        }),
        case("a directory", || {
            refused(Tiny::load_safetensors(d), "load_safetensors", &[])
        }),
        loads("empty", vec![], &["empty"]),
        loads("four bytes", vec![1, 2, 3, 4], &["four bytes"]),
        loads(
            "header length past the file",
            {
                let mut b = bytes.clone();
                b[..8].copy_from_slice(&(bytes.len() as u64 * 2).to_le_bytes());
                b
            },
            &[],
        ),
        loads(
            "header length u64::MAX",
            {
                let mut b = bytes.clone();
                b[..8].copy_from_slice(&u64::MAX.to_le_bytes());
                b
            },
            &[],
        ),
        loads(
            "header cut short",
            bytes[..8 + header_len / 2].to_vec(),
            &[],
        ),
        loads("data cut short", bytes[..bytes.len() - 5].to_vec(), &[]),
        loads(
            "header not JSON",
            safetensors_bytes("{not json", &data),
            &[],
        ),
        loads(
            "header not UTF-8",
            {
                let mut b = safetensors_bytes(&with(&format!("{w},{b}")), &data);
                b[9] = 0xff;
                b
            },
            &[],
        ),
        loads(
            "overlapping offsets",
            safetensors_bytes(
                &with(&format!("{w},{}", b.replace("[48,60]", "[40,52]"))),
                &data,
            ),
            &[],
        ),
        loads(
            "offsets past the data",
            safetensors_bytes(
                &with(&format!("{w},{}", b.replace("[48,60]", "[48,4000]"))),
                &data,
            ),
            &[],
        ),
        loads(
            "reversed offsets",
            safetensors_bytes(
                &with(&format!("{w},{}", b.replace("[48,60]", "[60,48]"))),
                &data,
            ),
            &[],
        ),
        loads(
            "offsets not matching the shape",
            safetensors_bytes(&with(&format!("{w},{}", b.replace("[3]", "[4]"))), &data),
            &[],
        ),
        loads(
            "a shape whose size overflows",
            safetensors_bytes(
                &with(&format!(
                    "{w},{}",
                    b.replace("[3]", "[4294967296,4294967296,16]")
                )),
                &data,
            ),
            &[],
        ),
        loads(
            "an unknown dtype",
            safetensors_bytes(&with(&format!("{w},{}", b.replace("F32", "F33"))), &data),
            &[],
        ),
        loads(
            "a parameter of another dtype",
            safetensors_bytes(
                &with(&format!(
                    "{w},{}",
                    b.replace(
                        "\"F32\",\"shape\":[3],\"data_offsets\":[48,60]",
                        "\"F16\",\"shape\":[6],\"data_offsets\":[48,60]"
                    )
                )),
                &data,
            ),
            &["fc.bias", "F32"],
        ),
        loads(
            "a parameter of another shape",
            safetensors_bytes(
                &with(&format!("{},{b}", w.replace("[3,4]", "[4,3]"))),
                &data,
            ),
            &["fc.weight", "[4, 3]", "[3, 4]"],
        ),
        loads(
            "a missing parameter",
            safetensors_bytes(&with(w), &data[..48]),
            &["fc.bias", "missing"],
        ),
    ];
    // Every one-byte cut of the good file's header, and of its data.
    for cut in [
        0,
        7,
        8,
        9,
        8 + header_len - 1,
        8 + header_len,
        bytes.len() - 1,
    ] {
        let b = bytes[..cut].to_vec();
        cases.push(case(
            format!("the good file cut at byte {cut}"),
            move || refused(load("cut", b), "load_safetensors", &[]),
        ));
    }
    let (n, problems) = run_cases(cases);
    common::report(&format!(
        "bad inputs, safetensors: {n} cases, {} problems",
        problems.len()
    ));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A disk that takes no more bytes, simulated by a file-size limit of 0
/// (`prlimit --fsize=0`, with `SIGXFSZ` ignored so a write fails with
/// `EFBIG` instead of killing the process, the path `ENOSPC` takes too):
/// on the LLVM device the computation still succeeds (objects link from
/// memory) with one warning that the cache cannot be used; on the C
/// device, whose compiler must write the shared object somewhere, it is
/// an error naming the kernel and the failed write, never a crash.
#[test]
fn a_full_disk_degrades_or_fails_cleanly() {
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no prlimit");
        return;
    }
    let mut devices = vec!["CPU"];
    if cfg!(feature = "llvm") {
        devices.push("LLVM");
    }
    for device in devices {
        let cache = tempfile::tempdir().unwrap();
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"trap '' XFSZ; exec prlimit --fsize=0 -- "$@""#)
            .arg("sh")
            .arg(&exe)
            .args(["env_child", "--exact", "--include-ignored", "--nocapture"])
            .args(["--test-threads=1"])
            .env("MOROK_CACHE_DIR", cache.path())
            .env("MOROK_DEVICE", device)
            .env_remove("MOROK_SANITIZE")
            .output()
            .expect("starting the child");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{device}: the child failed: {stderr}");
        let result = stderr
            .lines()
            .find(|l| l.starts_with("env child: "))
            .unwrap_or_else(|| panic!("{device}: no result: {stderr}"));
        if device == "LLVM" {
            assert_eq!(result, "env child: ok 24", "{device}: {stderr}");
            assert!(
                stderr.contains("cannot be used"),
                "{device}: no warning: {stderr}"
            );
        } else {
            assert!(
                result.starts_with("env child: err realize") && result.contains("bad_inputs.rs"),
                "{device}: {result}"
            );
        }
        common::report(&format!("full disk on {device}: {result}"));
    }
}
