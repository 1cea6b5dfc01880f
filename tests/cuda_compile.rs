//! The CUDA backend verified without a GPU (feature `cuda`): every kernel
//! of a broad set of tensor programs (elementwise ops over every dtype,
//! casts, transcendentals, reductions on every axis, matmuls, pads,
//! gathers, convolutions, normalizations, random numbers), optimized with
//! the GPU heuristics and lowered to a GPU launch, is rendered as CUDA C,
//! compiled by NVRTC and assembled by `ptxas` for sm_80 and sm_90 (and
//! `MOROK_CUDA_ARCH`, when set to another) with no error; a broken kernel
//! fails with NVRTC's log.
//!
//! Needs NVRTC (`MOROK_NVRTC_PATH` or `LD_LIBRARY_PATH`, see
//! `docs/CUDA.md`) and, for the assembly, `ptxas` (`MOROK_PTXAS` or
//! `PATH`). Without NVRTC each test prints why and passes, unless
//! `MOROK_REQUIRE_NVRTC=1` (CI), which makes its absence a failure.
#![cfg(feature = "cuda")]

mod common;

use morok::backends::cuda::{self, nvrtc, CudaRenderer};
use morok::core::device::DeviceError;
use morok::core::program::Program;
use morok::core::shape::ConvGeometry;
use morok::core::{compile_program, schedule, CompileOptions};
use morok::{DType, Tensor};

/// The architectures every kernel is compiled for.
const ARCHES: [&str; 2] = ["sm_80", "sm_90"];

/// `true` when NVRTC is there; otherwise prints why and returns `false`
/// (or fails under `MOROK_REQUIRE_NVRTC=1`).
fn nvrtc_or_skip(test: &str) -> bool {
    match cuda::libs::nvrtc_present() {
        Ok(()) => true,
        Err(e) if std::env::var("MOROK_REQUIRE_NVRTC").is_ok_and(|v| v == "1") => {
            panic!("{test}: MOROK_REQUIRE_NVRTC=1 but {e}")
        }
        Err(e) => {
            eprintln!("skipped {test}: {e}");
            false
        }
    }
}

/// The programs of every kernel `t`'s realize schedules, through the CUDA
/// pipeline (GPU heuristics, GPU lowering, CUDA C).
fn programs(t: &Tensor) -> Result<Vec<Program>, String> {
    let t = t.clone();
    let root = t.uop();
    let sched = schedule(&[root]).map_err(|e| e.to_string())?;
    let target = cuda::cuda_target(0, 80);
    sched
        .items
        .iter()
        .map(|item| {
            compile_program(
                &item.ast,
                &CudaRenderer,
                &target,
                &CompileOptions::default(),
            )
            .map_err(|e| e.to_string())
        })
        .collect()
}

/// [`ARCHES`], and `MOROK_CUDA_ARCH` when it names another.
fn arches() -> Vec<String> {
    let mut arches: Vec<String> = ARCHES.iter().map(|a| a.to_string()).collect();
    let default = nvrtc::default_arch();
    if !arches.contains(&default) {
        arches.push(default);
    }
    arches
}

/// Compiles `p` for every arch of [`arches`] and assembles each PTX when
/// `ptxas` is given; the number of NVRTC compiles and ptxas runs.
fn build(p: &Program, ptxas: Option<&std::path::Path>) -> Result<(usize, usize), DeviceError> {
    let (mut compiled, mut assembled) = (0, 0);
    for arch in &arches() {
        let ptx = nvrtc::compile_ptx(&p.source, &p.name, arch)?;
        compiled += 1;
        if let Some(ptxas) = ptxas {
            nvrtc::assemble(ptxas, &ptx, &p.name, arch)?;
            assembled += 1;
        }
    }
    Ok((compiled, assembled))
}

fn input(shape: &[usize], dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 97) as f32 / 13.0 - 3.0)
        .collect();
    let t = Tensor::from_vec(data, shape).expect("input");
    t.cast(dtype).expect("cast")
}

/// The tensor programs whose kernels are compiled (name, tensor).
fn cases() -> morok::Result<Vec<(String, Tensor)>> {
    let mut cases: Vec<(String, Tensor)> = Vec::new();
    let mut add = |name: &str, t: morok::Result<Tensor>| {
        cases.push((
            name.to_string(),
            t.unwrap_or_else(|e| panic!("{name}: {e}")),
        ));
    };
    for dt in common::DTYPES {
        let (a, b) = (input(&[33, 17], dt), input(&[33, 17], dt));
        add(&format!("add {dt:?}"), a.add(&b));
        add(&format!("mul {dt:?}"), a.mul(&b));
        add(&format!("maximum {dt:?}"), a.maximum(&b));
        add(&format!("lt {dt:?}"), a.lt(&b));
        add(
            &format!("where {dt:?}"),
            a.lt(&b).and_then(|m| m.where_(&a, &b)),
        );
        add(&format!("cast f32 {dt:?}"), a.cast(DType::F32));
        add(&format!("cast i32 {dt:?}"), a.cast(DType::I32));
        add(&format!("sum {dt:?}"), a.sum(Some(&[1]), false));
        add(&format!("max {dt:?}"), a.max(Some(&[0]), false));
    }
    for dt in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let a = input(&[64, 9], dt);
        add(&format!("exp {dt:?}"), a.exp());
        add(&format!("log {dt:?}"), a.log());
        add(&format!("sin {dt:?}"), a.sin());
        add(&format!("sqrt {dt:?}"), a.sqrt());
        add(&format!("tanh {dt:?}"), a.tanh());
        add(&format!("erf {dt:?}"), a.erf());
        add(&format!("pow {dt:?}"), a.pow(&a));
        add(&format!("div {dt:?}"), a.div(&a.exp()?));
        add(&format!("floor {dt:?}"), a.floor());
        add(
            &format!("bitcast {dt:?}"),
            a.bitcast(if dt.itemsize() == 8 {
                DType::I64
            } else if dt.itemsize() == 4 {
                DType::I32
            } else {
                DType::I16
            }),
        );
    }
    for dt in [DType::I32, DType::I64, DType::U8, DType::I8] {
        let (a, b) = (
            input(&[40, 3], dt),
            input(&[40, 3], dt).add(input(&[40, 3], dt))?,
        );
        add(&format!("floor_div {dt:?}"), a.floor_div(&b));
        add(&format!("remainder {dt:?}"), a.remainder(&b));
        add(&format!("shift {dt:?}"), a.bitwise_left_shift(&b));
        add(&format!("xor {dt:?}"), a.bitwise_xor(&b));
    }
    let x = input(&[5, 7, 9], DType::F32);
    for axis in 0..3 {
        add(&format!("sum axis {axis}"), x.sum(Some(&[axis]), false));
        add(&format!("max axis {axis}"), x.max(Some(&[axis]), true));
        add(&format!("argmax axis {axis}"), x.argmax(Some(axis)));
        add(&format!("cumsum axis {axis}"), x.cumsum(axis));
        add(&format!("softmax axis {axis}"), x.softmax(axis));
    }
    add("sum all", x.sum(None, false));
    add("sum two axes", x.sum(Some(&[0, 2]), false));
    add("big sum", input(&[512, 1024], DType::F32).sum(None, false));
    add(
        "column sum",
        input(&[4096, 64], DType::F32).sum(Some(&[0]), false),
    );
    add("var", x.var(Some(&[2]), 1, false));
    add(
        "layernorm",
        input(&[16, 128], DType::F32).layernorm(&[-1], None, None, 1e-5),
    );
    for (m, k, n) in [(64, 64, 64), (33, 17, 9), (256, 512, 128), (1, 1000, 1)] {
        for dt in [DType::F32, DType::F16, DType::BF16] {
            add(
                &format!("matmul {m}x{k}x{n} {dt:?}"),
                input(&[m, k], dt).matmul(&input(&[k, n], dt)),
            );
        }
    }
    add(
        "matmul f16 to f32",
        input(&[64, 32], DType::F16)
            .matmul(&input(&[32, 48], DType::F16))
            .and_then(|t| t.cast(DType::F32)),
    );
    add(
        "batched matmul",
        input(&[4, 32, 16], DType::F32).matmul(&input(&[4, 16, 24], DType::F32)),
    );
    add("pad", x.pad(&[(1, 2), (0, 0), (3, 1)], 0.0f32));
    add("flip", x.flip(&[0, 2]).and_then(|t| t.add(&x)));
    add(
        "permute contiguous",
        x.permute(&[2, 0, 1]).and_then(|t| t.exp()),
    );
    add("cat", Tensor::cat(&[&x, &input(&[5, 3, 9], DType::F32)], 1));
    let idx = Tensor::from_vec(vec![2i64, 0, 4, 1, 3, 3, 0], &[7]).expect("index");
    add("index_select", x.index_select(0, &idx));
    let gidx = Tensor::from_vec(vec![1i64, 0, 6, 2, 3, 5, 4, 0, 1, 2], &[5, 2, 1])?;
    add("gather", x.gather(1, &gidx.expand(&[5, 2, 9])?));
    add(
        "conv2d",
        input(&[2, 3, 12, 12], DType::F32).conv2d(
            &input(&[8, 3, 3, 3], DType::F32),
            Some(&input(&[8], DType::F32)),
            ConvGeometry {
                padding: (1, 1).into(),
                ..ConvGeometry::default()
            },
        ),
    );
    add(
        "huge elementwise",
        input(&[3, 70_000], DType::F32)
            .expand(&[20, 3, 70_000])?
            .exp(),
    );
    add("rand", Ok(Tensor::rand(&[1000], DType::F32)));
    add("randn f16", Ok(Tensor::randn(&[33, 3], DType::F16)));
    Ok(cases)
}

/// Every kernel of [`cases`] compiles with NVRTC and assembles with
/// `ptxas` for sm_80 and sm_90.
#[test]
fn every_kernel_compiles_and_assembles_for_sm80_and_sm90() {
    if !nvrtc_or_skip("every_kernel_compiles_and_assembles_for_sm80_and_sm90") {
        return;
    }
    let ptxas = nvrtc::find_ptxas();
    if ptxas.is_none() {
        assert!(
            std::env::var("MOROK_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "MOROK_REQUIRE_NVRTC=1 but no ptxas (MOROK_PTXAS or PATH)"
        );
        eprintln!("no ptxas (MOROK_PTXAS or PATH): compiling to PTX only");
    }
    let cases = cases().expect("cases");
    let (mut kernels, mut compiled, mut assembled) = (0, 0, 0);
    let mut failures = Vec::new();
    for (name, t) in &cases {
        let programs = match programs(t) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        for p in &programs {
            kernels += 1;
            match build(p, ptxas.as_deref()) {
                Ok((c, a)) => {
                    compiled += c;
                    assembled += a;
                }
                Err(e) => failures.push(format!("{name}: {e}\n{}", p.source)),
            }
        }
    }
    println!(
        "cuda compile: {} cases, {kernels} kernels, {compiled} NVRTC compiles, {assembled} ptxas runs, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(kernels >= cases.len(), "every case has a kernel");
}

/// The fixed kernels whose CUDA C is kept in `tests/cuda_snapshots/`.
fn snapshot_cases() -> morok::Result<Vec<(&'static str, Tensor)>> {
    let a = input(&[64, 48], DType::F32);
    let b = input(&[48, 32], DType::F32);
    Ok(vec![
        ("elementwise", a.exp()?.add(&a)?),
        ("row_sum", a.sum(Some(&[1]), false)?),
        ("matmul", a.matmul(&b)?),
        ("half_add", a.cast(DType::F16)?.add(&a.cast(DType::F16)?)?),
        (
            "matmul_tensor_cores",
            a.cast(DType::F16)?.matmul(&b.cast(DType::F16)?)?,
        ),
    ])
}

/// The CUDA C of a few fixed kernels (from `extern "C"` on) equals the files in
/// `tests/cuda_snapshots/` (`MOROK_BLESS=1` rewrites them), so a change
/// of the generated code shows in review. Needs no NVRTC.
#[test]
fn cuda_source_snapshots() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cuda_snapshots");
    let bless = std::env::var("MOROK_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, t) in snapshot_cases().expect("cases") {
        let source: String = programs(&t)
            .expect("programs")
            .iter()
            .map(|p| {
                // From the kernel on: the prelude is the same in every one.
                let kernel = p
                    .source
                    .find("extern \"C\"")
                    .map_or("", |at| &p.source[at..]);
                format!(
                    "// {}: grid {:?}, block {:?}\n{kernel}",
                    p.name, p.launch.global, p.launch.local
                )
            })
            .collect();
        let path = dir.join(format!("{name}.cu"));
        if bless {
            std::fs::create_dir_all(&dir).expect("snapshot dir");
            std::fs::write(&path, &source).expect("writing a snapshot");
            continue;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        if kept != source {
            stale.push(format!("{}:\n{source}", path.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "CUDA C differs from the snapshots (MOROK_BLESS=1 rewrites them):\n{}",
        stale.join("\n")
    );
}

/// A kernel NVRTC rejects fails with NVRTC's log in the error.
#[test]
fn a_broken_kernel_fails_with_nvrtcs_log() {
    if !nvrtc_or_skip("a_broken_kernel_fails_with_nvrtcs_log") {
        return;
    }
    let source = "extern \"C\" __global__ void broken(float *out) { out[0] = undeclared_name; }\n";
    let e = nvrtc::compile_ptx(source, "broken", "sm_80").unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, DeviceError::Compile { .. }) && msg.contains("undeclared_name"),
        "{msg}"
    );
    assert!(msg.contains("broken"), "{msg}");
    if let Some(ptxas) = nvrtc::find_ptxas() {
        let e = nvrtc::assemble(
            &ptxas,
            ".version 8.0\n.target sm_80\nnot ptx\n",
            "bad",
            "sm_80",
        )
        .unwrap_err();
        assert!(matches!(e, DeviceError::Compile { .. }), "{e}");
    }
}

/// The kernel of the cache tests.
const TWICE: &str = "extern \"C\" __global__ void twice(float *out) { out[0] *= 2.0f; }\n";

/// The file in the cache directory `dir` whose name ends with `ext`.
fn cache_entry(dir: &std::path::Path, ext: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(ext))
        .unwrap_or_else(|| panic!("no *{ext} in the cache"))
}

/// PTX is cached on disk: a second compile of the same source reads the
/// entry (a planted entry with a matching checksum is what comes back),
/// and an entry whose checksum does not match is compiled again.
#[test]
fn ptx_is_cached_on_disk_and_a_corrupt_entry_is_rebuilt() {
    if !nvrtc_or_skip("ptx_is_cached_on_disk_and_a_corrupt_entry_is_rebuilt") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = TWICE;
    let first = nvrtc::compile_ptx_cached(source, "twice", "sm_80", dir.path()).unwrap();
    assert!(first.contains(".entry twice"), "{first}");
    let (ptx_path, sum_path) = (
        cache_entry(dir.path(), ".ptx"),
        cache_entry(dir.path(), ".ptx.blake3"),
    );
    // A planted entry with its checksum is read back as it is.
    let planted = format!("{first}// planted\n");
    std::fs::write(&ptx_path, &planted).unwrap();
    let sum = morok::backends::cpu::c::compiler::checksum_hex(planted.as_bytes());
    std::fs::write(&sum_path, sum).unwrap();
    let hit = nvrtc::compile_ptx_cached(source, "twice", "sm_80", dir.path()).unwrap();
    assert_eq!(hit, planted);
    // Another architecture is another entry.
    let other = nvrtc::compile_ptx_cached(source, "twice", "sm_90", dir.path()).unwrap();
    assert!(other.contains("sm_90"), "{other}");
    // A corrupt entry (checksum mismatch) is compiled again and replaced.
    std::fs::write(&ptx_path, "garbage").unwrap();
    let rebuilt = nvrtc::compile_ptx_cached(source, "twice", "sm_80", dir.path()).unwrap();
    assert_eq!(rebuilt, first);
    assert_eq!(std::fs::read_to_string(&ptx_path).unwrap(), first);
}

/// The runtime's form: NVRTC compiles straight to a cubin (an ELF image
/// for the architecture, loaded without the driver's PTX compiler),
/// cached like the PTX; another architecture is another cubin, and a
/// corrupt entry is compiled again.
#[test]
fn cubins_are_compiled_by_nvrtc_and_cached_on_disk() {
    if !nvrtc_or_skip("cubins_are_compiled_by_nvrtc_and_cached_on_disk") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cubin = |arch: &str| {
        nvrtc::compile_cached(TWICE, "twice", arch, nvrtc::Output::Cubin, dir.path()).unwrap()
    };
    let first = cubin("sm_80");
    assert_eq!(&first[..4], b"\x7fELF", "a cubin is an ELF image");
    let file = cache_entry(dir.path(), ".cubin");
    assert_eq!(std::fs::read(&file).unwrap(), first);
    assert_ne!(cubin("sm_90"), first);
    std::fs::write(&file, b"garbage").unwrap();
    assert_eq!(cubin("sm_80"), first);
    assert_eq!(std::fs::read(&file).unwrap(), first);
    let broken = nvrtc::compile(
        "__global__ void f() { undefined_name; }",
        "f",
        "sm_80",
        nvrtc::Output::Cubin,
    )
    .unwrap_err()
    .to_string();
    assert!(broken.contains("undefined_name"), "{broken}");
}
