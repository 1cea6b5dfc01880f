//! Shared helpers: kernel AST builders following the contract in
//! `docs/ARCHITECTURE.md`, and a runner that lowers, compiles and runs a
//! kernel on the CPU device with host data.

use morok_backends::{CpuConfig, CpuDevice};
use morok_core::device::{CompiledKernel, Device};
use morok_core::dtype::DType;
use morok_core::uop::{AxisType, UOp};
use morok_core::LoweredKernel;
use morok_core::{render_program, CompileOptions};
use std::sync::Arc;

/// A device with a private cache directory and `threads` workers.
pub fn device(threads: usize) -> (CpuDevice, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    (device_in(&dir.path().join("cache"), threads), dir)
}

/// A fresh device (empty in-memory caches) whose object cache is
/// `cache_dir`, with `threads` workers. The codegen is C, or LLVM when
/// `MOROK_DEVICE=LLVM` (feature `llvm`).
pub fn device_in(cache_dir: &std::path::Path, threads: usize) -> CpuDevice {
    #[cfg(feature = "llvm")]
    if std::env::var("MOROK_DEVICE").is_ok_and(|d| d.eq_ignore_ascii_case("llvm")) {
        return llvm_device_in(cache_dir, threads);
    }
    c_device_in(cache_dir, threads)
}

/// Like [`device_in`], always with the LLVM codegen.
#[cfg(feature = "llvm")]
pub fn llvm_device_in(cache_dir: &std::path::Path, threads: usize) -> CpuDevice {
    let config = CpuConfig {
        cache_dir: cache_dir.to_path_buf(),
        threads,
        compiler: None,
    };
    let codegen = morok_backends::cpu::LlvmCodegen::new(config.cache_dir.clone());
    CpuDevice::with_codegen(config, Arc::new(codegen))
}

/// Like [`device_in`], always with the C codegen (libm references).
pub fn c_device_in(cache_dir: &std::path::Path, threads: usize) -> CpuDevice {
    CpuDevice::with_config(CpuConfig {
        cache_dir: cache_dir.to_path_buf(),
        threads,
        compiler: None,
    })
}

/// Raw little-endian bytes of a slice of plain values.
pub fn to_bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    let n = std::mem::size_of_val(v);
    // SAFETY: T is a plain value type (ints, floats, half types).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), n) }.to_vec()
}

/// Values back from raw bytes.
pub fn from_bytes<T: Copy + Default>(b: &[u8]) -> Vec<T> {
    let n = b.len() / std::mem::size_of::<T>();
    let mut out = vec![T::default(); n];
    // SAFETY: `out` has room for exactly `b.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), out.as_mut_ptr().cast::<u8>(), b.len()) };
    out
}

/// One kernel argument: element type and contents.
#[derive(Clone)]
pub struct Arg {
    pub dtype: DType,
    pub bytes: Vec<u8>,
}

impl Arg {
    pub fn new<T: Copy>(dtype: DType, v: &[T]) -> Arg {
        Arg {
            dtype,
            bytes: to_bytes(v),
        }
    }

    pub fn zeros(dtype: DType, n: usize) -> Arg {
        Arg {
            dtype,
            bytes: vec![0; n * dtype.itemsize()],
        }
    }

    pub fn get<T: Copy + Default>(&self) -> Vec<T> {
        from_bytes(&self.bytes)
    }
}

/// Runs the per-kernel pipeline for `ast` and compiles it on `dev`.
pub fn compile(dev: &CpuDevice, ast: &Arc<UOp>) -> Arc<dyn CompiledKernel> {
    let program =
        morok_backends::compile_program(ast, dev, &CompileOptions::default()).expect("pipeline");
    dev.compile(&program)
        .unwrap_or_else(|e| panic!("compile failed: {e}"))
}

/// Compiles a kernel lowered from `ast` by hand (other capabilities than
/// the device's renderer has, say) on `dev`.
pub fn compile_lowered(
    dev: &CpuDevice,
    ast: &Arc<UOp>,
    lowered: LoweredKernel,
) -> Arc<dyn CompiledKernel> {
    let program = render_program(ast, lowered, dev.renderer()).expect("render");
    dev.compile(&program)
        .unwrap_or_else(|e| panic!("compile failed: {e}"))
}

/// Runs a compiled kernel on `args` (slot order), copying results back.
pub fn run(dev: &CpuDevice, k: &Arc<dyn CompiledKernel>, args: &mut [Arg]) {
    let mut bufs = Vec::new();
    for a in args.iter() {
        let n = a.bytes.len() / a.dtype.itemsize();
        let mut b = dev.allocate(a.dtype, n).expect("alloc");
        b.copy_in(&a.bytes).expect("copy in");
        bufs.push(b);
    }
    let refs: Vec<_> = bufs.iter().map(|b| b.as_ref()).collect();
    k.run(&refs, &[])
        .unwrap_or_else(|e| panic!("run failed: {e}\n{}", k.source()));
    for (a, b) in args.iter_mut().zip(&bufs) {
        b.copy_out(&mut a.bytes).expect("copy out");
    }
}

/// Lowers `ast` with `opts`, compiles it on `dev` and runs it on copies
/// of `args`: the bytes of slot 0 afterwards and the kernel's source.
pub fn run_lowered_with(
    dev: &CpuDevice,
    ast: &Arc<UOp>,
    opts: &morok_core::LowerOptions,
    args: &[Arg],
) -> (Vec<u8>, String) {
    let lowered = morok_core::lower(ast, opts).expect("lower");
    let k = compile_lowered(dev, ast, lowered);
    let mut args = args.to_vec();
    run(dev, &k, &mut args);
    (args[0].bytes.clone(), k.source().to_string())
}

/// Lowers, compiles and runs in one go.
pub fn exec(dev: &CpuDevice, ast: &Arc<UOp>, args: &mut [Arg]) -> Arc<dyn CompiledKernel> {
    let k = compile(dev, ast);
    run(dev, &k, args);
    k
}

/// `RANGE(n)` with the given id and type.
pub fn range(n: i64, id: usize, t: AxisType) -> Arc<UOp> {
    UOp::range(&UOp::index(n), id, t)
}

/// `LOAD(INDEX(DEFINE_GLOBAL(slot), idx))`.
pub fn load(slot: i64, dtype: DType, idx: &Arc<UOp>) -> Arc<UOp> {
    UOp::define_global(slot, dtype).index_into(idx, None).load()
}

/// `SINK(END(STORE(INDEX(DEFINE_GLOBAL(slot), idx), value), ranges...))`.
pub fn store_kernel(slot: i64, idx: &Arc<UOp>, value: &Arc<UOp>, ranges: &[Arc<UOp>]) -> Arc<UOp> {
    let st = UOp::define_global(slot, value.dtype())
        .index_into(idx, None)
        .store(value);
    UOp::sink(vec![st.end(ranges)])
}

/// An elementwise kernel over `n` elements: out[i] = f(in1[i], in2[i], ...).
pub fn elementwise(n: i64, inputs: &[DType], f: impl Fn(&[Arc<UOp>]) -> Arc<UOp>) -> Arc<UOp> {
    let i = range(n, 0, AxisType::Loop);
    let vals: Vec<Arc<UOp>> = inputs
        .iter()
        .enumerate()
        .map(|(k, d)| load(k as i64 + 1, *d, &i))
        .collect();
    let v = f(&vals);
    store_kernel(0, &i, &v, std::slice::from_ref(&i))
}

/// The host CPU as the optimizer sees it, without vectors (tests add the
/// width they need with `with_vector_bytes`).
pub fn scalar_host() -> morok_core::target::Target {
    morok_core::target::Target::cpu(
        0,
        morok_backends::host::l2_bytes(),
        morok_backends::host::available_threads(),
    )
}
