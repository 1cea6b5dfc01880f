//! Kernel opts through the whole CPU path: each opt list is applied to a
//! kernel AST, lowered, rendered to C, compiled and run, and must store
//! what the unoptimized kernel stores.

use super::common::*;
use super::reduce::{matmul_ast, matmul_ast_of};
use morok_core::device::Device;
use morok_core::dtype::DType;
use morok_core::target::Target;
use morok_core::uop::{AxisType, Op, ReduceOp, UOp};
use morok_core::{apply_opts, Opt, OptOps::*};
use morok_core::{lower, LowerOptions};
use std::sync::Arc;

fn data(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i * 7 + seed * 13) % 23) as f32 - 11.0) * 0.37)
        .collect()
}

/// Lowers `ast` as is (no heuristics) and runs it on `inputs`.
fn run_as_is(
    dev: &morok_backends::CpuDevice,
    ast: &Arc<UOp>,
    out: usize,
    inputs: &[Vec<f32>],
) -> Vec<f32> {
    let lowered = lower(ast, &LowerOptions::new(dev.renderer().caps())).expect("lower");
    let k = compile_lowered(dev, ast, lowered);
    let mut args = vec![Arg::zeros(DType::F32, out)];
    args.extend(inputs.iter().map(|v| Arg::new(DType::F32, v)));
    run(dev, &k, &mut args);
    args[0].get::<f32>()
}

fn limits() -> Target {
    Target {
        threads: 8,
        ..super::common::scalar_host()
    }
}

/// Every opt list gives the unoptimized kernel's results.
fn check(ast: &Arc<UOp>, out: usize, inputs: &[Vec<f32>], lists: &[&[Opt]]) {
    let (dev, _dir) = device(2);
    let want = run_as_is(&dev, ast, out, inputs);
    for opts in lists {
        let optimized = apply_opts(ast, opts, &limits()).unwrap_or_else(|e| panic!("{e}"));
        let got = run_as_is(&dev, &optimized, out, inputs);
        assert_eq!(got, want, "opts {opts:?}");
    }
}

#[test]
fn matmul_under_opt_lists() {
    let (m, k, n) = (12usize, 10usize, 16usize);
    check(
        &matmul_ast(m as i64, k as i64, n as i64),
        m * n,
        &[data(m * k, 1), data(k * n, 2)],
        &[
            &[
                Opt::new(Upcast, 1, 4),
                Opt::new(Upcast, 0, 4),
                Opt::new(Unroll, 0, 2),
            ],
            &[
                Opt::new(Upcast, 1, 8),
                Opt::new(Upcast, 0, 3),
                Opt::new(Unroll, 0, 0),
            ],
            &[Opt::new(Thread, 0, 2), Opt::new(Upcast, 1, 4)],
            &[Opt::new(Swap, 0, 1), Opt::new(Thread, 0, 4)],
            &[
                Opt::new(PadTo, 0, 8),
                Opt::new(PadTo, 2, 4),
                Opt::new(Upcast, 1, 16),
            ],
        ],
    );
}

#[test]
fn reductions_with_padding_and_unrolling() {
    for op in [ReduceOp::Add, ReduceOp::Max] {
        let (rows, k) = (7usize, 13usize);
        let i = range(rows as i64, 0, AxisType::Loop);
        let r = range(k as i64, 1, AxisType::Reduce);
        let v = load(1, DType::F32, &i.mul(&UOp::index(k as i64)).add(&r)).reduce(op, &[r]);
        let ast = store_kernel(0, &i, &v.un(Op::Neg), std::slice::from_ref(&i));
        check(
            &ast,
            rows,
            &[data(rows * k, 3)],
            &[
                &[Opt::new(PadTo, 1, 4), Opt::new(Unroll, 0, 4)],
                &[
                    Opt::new(PadTo, 0, 4),
                    Opt::new(Upcast, 0, 4),
                    Opt::new(Unroll, 0, 0),
                ],
                &[Opt::new(Thread, 0, 7)],
            ],
        );
    }
}

#[test]
fn heuristic_matmul_is_tiled_and_fused() {
    let (m, k, n) = (32usize, 64usize, 48usize);
    let (a, b) = (data(m * k, 4), data(k * n, 5));
    let (dev, _dir) = device(2);
    let mut args = [
        Arg::zeros(DType::F32, m * n),
        Arg::new(DType::F32, &a),
        Arg::new(DType::F32, &b),
    ];
    let kernel = exec(&dev, &matmul_ast(m as i64, k as i64, n as i64), &mut args);
    assert_eq!(
        args[0].get::<f32>(),
        super::reduce::optimized_matmul_ref(&a, &b, m, k, n)
    );
    let src = kernel.source();
    // A register tile of vector accumulators (8 of them whatever the
    // host's width: 8×16 lanes with AVX-512, 4×16 with AVX2, 4×8 with
    // 16-byte vectors) updated by vector FMAs where the host has them,
    // by a multiply and an add otherwise, in either codegen.
    let w = morok_backends::host::host_vector_bytes() / 4;
    let fma = morok_backends::host::host_has_fma();
    if src.contains("define void") {
        assert_eq!(
            src.contains(&format!("@llvm.fma.v{w}f32")),
            fma,
            "vector FMAs exactly where the host has them:\n{src}"
        );
        assert_eq!(
            src.matches(&format!("alloca <{w} x float>")).count(),
            8,
            "8 vector accumulators:\n{src}"
        );
        assert!(
            src.contains(&format!("load <{w} x float>, ptr")),
            "vector loads:\n{src}"
        );
    } else {
        let acc_type = format!("morok_f32x{w}");
        let acc = format!("{acc_type} acc");
        assert_eq!(
            src.matches(&acc).count(),
            8,
            "8 vector accumulators:\n{src}"
        );
        assert_eq!(
            src.contains(&format!("{acc_type}_fma(")),
            fma,
            "vector FMAs exactly where the host has them:\n{src}"
        );
        assert!(
            src.contains(&format!("morok_f32x{w}_load(")),
            "vector loads:\n{src}"
        );
    }
}

/// The C compilers among `cc`, `clang-14` and `clang-19` that run here.
fn installed_c_compilers() -> Vec<&'static str> {
    ["cc", "clang-14", "clang-19"]
        .into_iter()
        .filter(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect()
}

/// A vector `MULACC` (a matmul's `f32` or `f64` sum of products with its
/// output axis upcast, at every vector width the host's registers hold,
/// from 16 bytes: narrower upcasts stay scalar lanes, see
/// `vector_pieces` in `morok-core/src/kernel/vectors.rs`)
/// renders as the C renderer's vector FMA helper, not lane by lane, and
/// stores the scalar `fma` results bit for bit, with every C compiler
/// installed (GCC takes the x86 FMA builtins, Clang 14 too, Clang 19
/// `__builtin_elementwise_fma`).
#[test]
fn vector_mulacc_renders_as_one_vector_fma() {
    let (m, k, n) = (3usize, 7usize, 16usize);
    let dir = tempfile::tempdir().expect("temp dir");
    let reg = morok_backends::host::host_vector_bytes() as usize;
    for compiler in installed_c_compilers() {
        let dev = morok_backends::CpuDevice::with_config(morok_backends::CpuConfig {
            cache_dir: dir.path().join(compiler),
            threads: 1,
            compiler: Some(compiler.to_string()),
        });
        let caps = dev.renderer().caps();
        if !caps.native.contains(Op::MulAcc) {
            return; // no FMA on this host: lowering emits no MULACC
        }
        let mut lower_fused = LowerOptions::new(caps);
        lower_fused.fma = true;
        for (dtype, size) in [(DType::F32, 4), (DType::F64, 8)] {
            let ast = matmul_ast_of(dtype, m as i64, k as i64, n as i64);
            let a: Vec<f64> = data(m * k, 1).iter().map(|&v| f64::from(v)).collect();
            let b: Vec<f64> = data(k * n, 2).iter().map(|&v| f64::from(v) * 1.1).collect();
            let arg = |v: &[f64]| match dtype {
                DType::F32 => Arg::new(dtype, &v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
                _ => Arg::new(dtype, v),
            };
            let got = |args: &[Arg]| -> Vec<f64> {
                match dtype {
                    DType::F32 => args[0].get::<f32>().into_iter().map(f64::from).collect(),
                    _ => args[0].get::<f64>(),
                }
            };
            let want: Vec<f64> = (0..m * n)
                .map(|o| {
                    let (i, j) = (o / n, o % n);
                    (0..k).fold(0.0, |acc, r| {
                        let (x, y) = (a[i * k + r], b[r * n + j]);
                        match dtype {
                            DType::F32 => f64::from((x as f32).mul_add(y as f32, acc as f32)),
                            _ => x.mul_add(y, acc),
                        }
                    })
                })
                .collect();
            for w in [2usize, 4, 8, 16]
                .into_iter()
                .filter(|w| w * size <= reg && w * size >= 16)
            {
                let opts = [Opt::new(Upcast, 1, w as i64)];
                let optimized =
                    apply_opts(&ast, &opts, &limits()).unwrap_or_else(|e| panic!("{e}"));
                let lowered = lower(&optimized, &lower_fused).expect("lower");
                let kernel = compile_lowered(&dev, &optimized, lowered);
                let src = kernel.source();
                let body = &src[src.find("\nvoid kernel(").expect("the kernel")..];
                let name = format!("morok_{}x{w}", dtype.scalar_type().name());
                assert!(
                    body.contains(&format!("{name}_fma(")),
                    "{compiler}, {name}:\n{src}"
                );
                assert_eq!(
                    body.matches("fma(").count() + body.matches("fmaf(").count(),
                    body.matches("_fma(").count(),
                    "{compiler}, {name}, lane by lane:\n{src}"
                );
                let mut args = vec![Arg::zeros(dtype, m * n), arg(&a), arg(&b)];
                run(&dev, &kernel, &mut args);
                assert_eq!(got(&args), want, "{compiler}, {name}");
            }
        }
    }
}
