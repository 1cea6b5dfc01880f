//! The LLVM codegen: object emission for the host and another triple, a
//! host object linked and run, the in-memory and on-disk caches, and
//! corrupt cache entries rebuilt.

use super::common::*;
use morok_backends::cpu::llvm::{emit_assembly, emit_object, TargetSpec};
use morok_backends::cpu::LlvmRenderer;
use morok_backends::cpu::{Codegen, KernelFn, LlvmCodegen};
use morok_backends::host::host_vector_bytes;
use morok_backends::CpuDevice;
use morok_core::dtype::DType;
use morok_core::render::Renderer;
use morok_core::uop::{AxisType, Op, UOp};
use morok_core::{apply_opts, Opt, OptOps};
use morok_core::{lower, LowerOptions};
use morok_core::{render_program, CompileOptions};
use std::ffi::c_void;

/// A 7-element f32 `out = a * b + a` kernel, lowered for the LLVM renderer.
fn lowered_kernel() -> morok_core::LoweredKernel {
    let ast = elementwise(7, &[DType::F32, DType::F32], |v| v[0].mul(&v[1]).add(&v[0]));
    let opts = LowerOptions::new(LlvmRenderer.caps()).with_name("fma_like".to_string());
    lower(&ast, &opts).expect("lower")
}

#[test]
fn object_for_another_triple_is_an_elf_for_that_machine() {
    let spec = TargetSpec {
        triple: "aarch64-unknown-linux-gnu".to_string(),
        cpu: "generic".to_string(),
        features: String::new(),
    };
    let obj = emit_object(&lowered_kernel(), &spec).expect("emit");
    assert_eq!(&obj[..4], b"\x7fELF");
    // e_machine (little-endian u16 at offset 18): EM_AARCH64 = 183.
    assert_eq!(u16::from_le_bytes([obj[18], obj[19]]), 183);
    assert!(
        obj.windows(8).any(|w| w == b"fma_like"),
        "symbol name missing"
    );
}

#[test]
fn unknown_triple_is_an_error() {
    let spec = TargetSpec {
        triple: "nonsense-none-none".to_string(),
        cpu: "generic".to_string(),
        features: String::new(),
    };
    let e = emit_object(&lowered_kernel(), &spec).expect_err("bad triple");
    assert!(e.to_string().contains("nonsense"), "{e}");
}

/// Links the object `obj` (the `a * b + a` kernel `name` over `n`
/// floats, whose outer loop has `steps` iterations) into a shared library
/// with the C compiler, runs it and checks its output.
fn link_and_check(obj: &[u8], name: &str, n: usize, steps: i64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let o = dir.path().join("k.o");
    let so = dir.path().join("k.so");
    std::fs::write(&o, obj).expect("write");
    let cc = morok_backends::cpu::Compiler::find(None).expect("a C compiler");
    let status = std::process::Command::new(cc.path())
        .args(["-shared", "-o"])
        .arg(&so)
        .arg(&o)
        .arg("-lm")
        .status()
        .expect("link");
    assert!(status.success());
    let a: Vec<f32> = (0..n).map(|x| x as f32 - 2.5).collect();
    let b: Vec<f32> = (0..n).map(|x| 0.5 * x as f32).collect();
    let mut out = vec![0f32; n];
    let bufs = [
        out.as_mut_ptr().cast::<c_void>(),
        a.as_ptr().cast_mut().cast::<c_void>(),
        b.as_ptr().cast_mut().cast::<c_void>(),
    ];
    let sizes = [n as i64; 3];
    // SAFETY: the library is the kernel just compiled; its entry has the
    // `KernelFn` ABI and the buffers hold `n` elements each.
    unsafe {
        let lib = libloading::Library::new(&so).expect("load");
        let f = *lib.get::<KernelFn>(name.as_bytes()).expect("symbol");
        f(bufs.as_ptr(), sizes.as_ptr(), std::ptr::null(), 0, steps);
    }
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y + x).collect();
    assert_eq!(out, want);
}

#[test]
fn host_object_links_and_runs() {
    let obj = emit_object(&lowered_kernel(), &TargetSpec::host().expect("host")).expect("emit");
    link_and_check(&obj, "fma_like", 7, 7);
}

/// The `a * b + a` kernel over 64 floats with 16 upcast lanes, lowered
/// for the LLVM renderer: one `<16 x float>` vector per step.
fn vector_kernel() -> morok_core::LoweredKernel {
    let ast = elementwise(64, &[DType::F32, DType::F32], |v| {
        v[0].mul(&v[1]).add(&v[0])
    });
    let limits = super::common::scalar_host().with_vector_bytes(64);
    let ast = apply_opts(&ast, &[Opt::new(OptOps::Upcast, 0, 16)], &limits).expect("upcast");
    let caps = LlvmRenderer.caps().with_vector_bytes(64);
    let opts = LowerOptions::new(caps).with_name("vec16".to_string());
    lower(&ast, &opts).expect("lower")
}

#[test]
fn host_code_uses_the_widest_vector_registers() {
    let asm = emit_assembly(&vector_kernel(), &TargetSpec::host().expect("host")).expect("asm");
    match host_vector_bytes() {
        64 => assert!(asm.contains("%zmm"), "AVX-512 registers:\n{asm}"),
        32 => assert!(
            asm.contains("%ymm") && !asm.contains("%zmm"),
            "AVX2 registers only:\n{asm}"
        ),
        _ => assert!(
            !asm.contains("%ymm") && !asm.contains("%zmm"),
            "no AVX registers on 16-byte vectors:\n{asm}"
        ),
    }
}

#[test]
fn vector_exp_and_selects_use_vector_registers_and_no_calls() {
    // exp's decomposition (range reduction: compares, selects, shifts,
    // bitcasts) and a relu-like select on 16 upcast lanes: vector masks
    // keep every step in vector registers, no libm call is left.
    let ast = elementwise(64, &[DType::F32], |v| {
        let e = v[0].un(Op::Exp);
        e.bin(Op::CmpLt, &v[0]).where_(&e, &v[0])
    });
    let limits = super::common::scalar_host().with_vector_bytes(host_vector_bytes());
    let ast = apply_opts(&ast, &[Opt::new(OptOps::Upcast, 0, 16)], &limits).expect("upcast");
    let opts = LowerOptions::new(LlvmRenderer.caps()).with_name("vexp".to_string());
    let kernel = lower(&ast, &opts).expect("lower");
    let ir = LlvmRenderer.render(&kernel).expect("render").source;
    assert!(
        ir.contains(" x i1>") && !ir.contains("extractelement"),
        "{ir}"
    );
    let asm = emit_assembly(&kernel, &TargetSpec::host().expect("host")).expect("asm");
    assert!(!asm.contains("call"), "no calls:\n{asm}");
    match host_vector_bytes() {
        64 => assert!(asm.contains("%zmm"), "AVX-512 registers:\n{asm}"),
        32 => assert!(asm.contains("%ymm"), "AVX2 registers:\n{asm}"),
        _ => assert!(
            !asm.contains("%ymm") && !asm.contains("%zmm"),
            "no AVX registers on 16-byte vectors:\n{asm}"
        ),
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn vectors_wider_than_the_cpu_are_split_and_run() {
    // Baseline x86-64 (SSE2, no AVX) and AVX2: LLVM splits the 64-byte
    // vectors into the registers the CPU has; the code still runs here.
    let host = TargetSpec::host().expect("host");
    for (cpu, features, wide) in [("x86-64", "", "%ymm"), ("haswell", "", "%zmm")] {
        let spec = TargetSpec {
            cpu: cpu.to_string(),
            features: features.to_string(),
            ..host.clone()
        };
        let asm = emit_assembly(&vector_kernel(), &spec).expect("asm");
        assert!(!asm.contains(wide), "no {wide} on {cpu}:\n{asm}");
        link_and_check(
            &emit_object(&vector_kernel(), &spec).expect("emit"),
            "vec16",
            64,
            4,
        );
    }
}

#[test]
fn builds_are_cached_in_memory_and_on_disk_and_corruption_rebuilds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let ast = elementwise(7, &[DType::F32, DType::F32], |v| v[0].add(&v[1]));
    let a: Vec<f32> = (0..7).map(|x| x as f32).collect();
    let check = |dev: &CpuDevice| {
        let mut args = [
            Arg::zeros(DType::F32, 7),
            Arg::new(DType::F32, &a),
            Arg::new(DType::F32, &a),
        ];
        exec(dev, &ast, &mut args);
        let want: Vec<f32> = a.iter().map(|x| x + x).collect();
        assert_eq!(args[0].get::<f32>(), want);
    };
    let dev = llvm_device_in(&cache, 1);
    check(&dev);
    check(&dev);
    assert_eq!(dev.compiler_invocations(), 1, "second build from memory");
    let fresh = llvm_device_in(&cache, 1);
    check(&fresh);
    assert_eq!(fresh.compiler_invocations(), 0, "built from the disk cache");
    // Corrupt every cached object: the next fresh device rebuilds.
    for e in std::fs::read_dir(cache.join("llvm")).expect("cache dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "o") {
            std::fs::write(&p, b"garbage").expect("corrupt");
        }
    }
    let again = llvm_device_in(&cache, 1);
    check(&again);
    assert_eq!(again.compiler_invocations(), 1, "corrupt entry rebuilt");
}

#[test]
fn identity_names_llvm_version_and_cpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cg = LlvmCodegen::new(dir.path().to_path_buf());
    let id = cg.identity();
    let spec = TargetSpec::host().expect("host");
    assert!(
        id.contains(&morok_backends::cpu::llvm::llvm_version()),
        "{id:?}"
    );
    assert!(id.contains(&spec.cpu), "{id:?}");
    assert_eq!(cg.device_name(), "LLVM");
}

#[test]
fn renderer_source_is_ir_text() {
    let ast = elementwise(7, &[DType::F32, DType::F32], |v| v[0].add(&v[1]));
    let dir = tempfile::tempdir().expect("temp dir");
    let dev = llvm_device_in(dir.path(), 1);
    let opts = CompileOptions::default();
    let p = morok_backends::compile_program(&ast, &dev, &opts).expect("pipeline");
    assert!(p.source.contains("define void @E_7(ptr"), "{}", p.source);
    let again = render_program(&ast, (*p.lowered).clone(), &LlvmRenderer).expect("render");
    assert_eq!(again.source, p.source, "rendering is deterministic");
}

#[test]
fn broadcasts_are_splats_and_run() {
    // out[i] = a[i] * b[0] on 16 upcast lanes: b[0] is one scalar for
    // every lane, rendered as LLVM's splat (one insertelement and a
    // shufflevector), not as one insertelement per lane.
    let i = range(64, 0, AxisType::Loop);
    let v = load(1, DType::F32, &i).mul(&load(2, DType::F32, &UOp::index(0)));
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let limits = super::common::scalar_host().with_vector_bytes(64);
    let ast = apply_opts(&ast, &[Opt::new(OptOps::Upcast, 0, 16)], &limits).expect("upcast");
    let caps = LlvmRenderer.caps().with_vector_bytes(64);
    let opts = LowerOptions::new(caps).with_name("bcast".to_string());
    let kernel = lower(&ast, &opts).expect("lower");
    let ir = LlvmRenderer.render(&kernel).expect("render").source;
    let splats = ir.matches("shufflevector <16 x float>").count();
    assert!(
        splats >= 1 && ir.matches("insertelement").count() == splats,
        "{ir}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = llvm_device_in(dir.path(), 1);
    let k = compile_lowered(&dev, &ast, kernel);
    let a: Vec<f32> = (0..64).map(|x| x as f32 * 0.5 - 7.0).collect();
    let mut args = [
        Arg::zeros(DType::F32, 64),
        Arg::new(DType::F32, &a),
        Arg::new(DType::F32, &[3.0f32]),
    ];
    run(&dev, &k, &mut args);
    let want: Vec<f32> = a.iter().map(|x| x * 3.0).collect();
    assert_eq!(args[0].get::<f32>(), want);
}

#[test]
fn llvm_index_arithmetic_is_64_bit() {
    // Every index of this kernel fits i32 (the C renderer's choice), but
    // the LLVM renderer asks for i64 indices: no sign extension before
    // each address. The kernel still computes the same values.
    let kernel = lowered_kernel();
    assert_eq!(kernel.index_dtype, DType::I64);
    let c_kernel = lower(
        &elementwise(7, &[DType::F32, DType::F32], |v| v[0].mul(&v[1]).add(&v[0])),
        &LowerOptions::new(morok_core::caps::Caps::all_native()),
    )
    .expect("lower");
    assert_eq!(c_kernel.index_dtype, DType::I32);
    let ir = LlvmRenderer.render(&kernel).expect("render").source;
    assert!(!ir.contains("i32 %"), "{ir}");
}
