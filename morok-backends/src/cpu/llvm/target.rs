//! Targets and machine code: the host's target description (triple, CPU
//! name, feature string), modules for a target, the O3 pipeline, and
//! object emission ([`emit_object`], also the macros' build-time path;
//! [`emit_assembly`] for reading the code).

use super::ir::build_module;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
};
use inkwell::OptimizationLevel;
use morok_core::device::{DeviceError, DeviceResult};
use morok_core::LoweredKernel;
use std::sync::{Mutex, OnceLock};

/// What machine code is generated for: a target triple, a CPU name and
/// an LLVM feature string (`+avx2,-avx512f,...`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetSpec {
    /// The target triple (`x86_64-unknown-linux-gnu`, ...).
    pub triple: String,
    /// The CPU name (`znver3`, `skylake-avx512`, `generic`, ...).
    pub cpu: String,
    /// Target features, comma-separated with `+`/`-` signs.
    pub features: String,
}

/// Initializes the native target (the JIT's) once.
fn init_native() -> DeviceResult<()> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| Target::initialize_native(&InitializationConfig::default()))
        .clone()
        .map_err(|e| DeviceError::NoCompiler(format!("LLVM native target: {e}")))
}

/// Initializes every target LLVM was built with once (object files for
/// other triples; the host needs only [`init_native`]).
fn init_all() -> DeviceResult<()> {
    static INIT: OnceLock<()> = OnceLock::new();
    init_native()?;
    INIT.get_or_init(|| Target::initialize_all(&InitializationConfig::default()));
    Ok(())
}

impl TargetSpec {
    /// The host: its triple, real CPU name and feature string, so the
    /// code uses every vector extension the machine has (AVX2, AVX-512).
    pub fn host() -> DeviceResult<TargetSpec> {
        host_spec().cloned()
    }

    /// Runs `f` with a target machine for this spec at O3, PIC (objects
    /// may be linked into shared libraries and are position independent
    /// in the JIT), small code model.
    ///
    /// Machines are made once and reused by every thread (a pool, see
    /// [`SharedMachine`]): making one parses the CPU and its features and
    /// sets up the subtarget, about 0.2 ms each time and a few ms the
    /// first time. `f` has the machine to itself while it runs.
    pub(super) fn with_machine<T>(
        &self,
        f: impl FnOnce(&TargetMachine) -> DeviceResult<T>,
    ) -> DeviceResult<T> {
        static POOL: Mutex<Vec<(TargetSpec, SharedMachine)>> = Mutex::new(Vec::new());
        let pool = || POOL.lock().unwrap_or_else(|e| e.into_inner());
        let taken = {
            let mut p = pool();
            let i = p.iter().position(|(spec, _)| spec == self);
            i.map(|i| p.swap_remove(i).1)
        };
        let machine = match taken {
            Some(m) => m,
            None => SharedMachine(self.new_machine()?),
        };
        let result = f(&machine.0);
        pool().push((self.clone(), machine));
        result
    }

    fn new_machine(&self) -> DeviceResult<TargetMachine> {
        if host_spec().is_ok_and(|host| host == self) {
            init_native()?;
        } else {
            init_all()?;
        }
        let triple = TargetTriple::create(&self.triple);
        let target = Target::from_triple(&triple)
            .map_err(|e| DeviceError::NoCompiler(format!("LLVM target `{}`: {e}", self.triple)))?;
        target
            .create_target_machine(
                &triple,
                &self.cpu,
                &self.features,
                OptimizationLevel::Aggressive,
                RelocMode::PIC,
                CodeModel::Small,
            )
            .ok_or_else(|| {
                DeviceError::NoCompiler(format!(
                    "LLVM cannot target `{}` with CPU `{}`",
                    self.triple, self.cpu
                ))
            })
    }
}

/// A `TargetMachine` in the pool of [`TargetSpec::with_machine`].
///
/// inkwell's `TargetMachine` is not `Send` (it wraps a raw pointer). An
/// LLVM `TargetMachine` has no affinity to the thread that made it; what
/// it does not support is concurrent use (it caches subtargets in
/// unsynchronized maps), and the pool never gives one machine to two
/// users: a machine is removed from the pool under its lock, used by one
/// thread, and put back when that use ends.
struct SharedMachine(TargetMachine);

// SAFETY: see the type's docs: moved between threads, used by one at a
// time.
unsafe impl Send for SharedMachine {}

/// The host's [`TargetSpec`], described once.
fn host_spec() -> DeviceResult<&'static TargetSpec> {
    static HOST: OnceLock<Result<TargetSpec, String>> = OnceLock::new();
    HOST.get_or_init(|| {
        init_native().map_err(|e| e.to_string())?;
        Ok(TargetSpec {
            triple: TargetMachine::get_default_triple()
                .as_str()
                .to_string_lossy()
                .into_owned(),
            cpu: TargetMachine::get_host_cpu_name().to_string(),
            features: capped_features(&TargetMachine::get_host_cpu_features().to_string()),
        })
    })
    .as_ref()
    .map_err(|e| DeviceError::NoCompiler(e.clone()))
}

/// The host's LLVM feature string `features` within the vector width the
/// kernels are rendered for ([`crate::host::host_vector_bytes`],
/// capped by `MOROK_CPU_VECTOR_BYTES`): unchanged at the host's own width;
/// otherwise with `-avx512f` (32 bytes) or `-avx` (16 bytes) appended on
/// x86-64. LLVM applies the signs in order and turning a feature off also
/// turns off every feature that implies it (AVX-512's subsets; AVX2, FMA
/// and AVX-512 for AVX), so the code stays within that width.
fn capped_features(features: &str) -> String {
    match crate::host::capped_x86_extension() {
        Some(off) if features.is_empty() => format!("-{off}"),
        Some(off) => format!("{features},-{off}"),
        None => features.to_string(),
    }
}

/// The LLVM version linked in (`19.1.7`).
pub fn llvm_version() -> String {
    let (mut major, mut minor, mut patch) = (0u32, 0u32, 0u32);
    // SAFETY: writes three integers through valid pointers.
    unsafe { inkwell::llvm_sys::core::LLVMGetVersion(&mut major, &mut minor, &mut patch) };
    format!("{major}.{minor}.{patch}")
}

fn compile_error(kernel: &str, what: String) -> DeviceError {
    DeviceError::Compile {
        kernel: kernel.to_string(),
        compiler: format!("LLVM {}", llvm_version()),
        stderr: what,
    }
}

/// Builds `kernel`'s module for `machine` (triple and data layout set),
/// verified unless `verified` says the renderer already verified the same
/// module (the device's programs: [`super::LlvmRenderer`] verifies what
/// it prints, and this builder makes the same IR from the same kernel).
pub(super) fn target_module<'ctx>(
    cx: &'ctx Context,
    kernel: &LoweredKernel,
    machine: &TargetMachine,
    verified: bool,
) -> DeviceResult<Module<'ctx>> {
    let triple = machine.get_triple();
    let x86_64 = triple.as_str().to_bytes().starts_with(b"x86_64");
    let module =
        build_module(cx, kernel, x86_64).map_err(|e| compile_error(&kernel.name, e.to_string()))?;
    module.set_triple(&triple);
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    if !verified {
        module
            .verify()
            .map_err(|e| compile_error(&kernel.name, format!("invalid IR: {e}")))?;
    }
    Ok(module)
}

/// The optimization pipeline: LLVM's O3, with the options of
/// [`pipeline_options`].
const PIPELINE: &str = "default<O3>";

/// Loop unrolling is off: the optimizer unrolls what pays explicitly
/// (upcast and unroll opts become straight-line vector code before LLVM
/// sees it), and LLVM's unroller on top mostly duplicated the vector
/// loops of elementwise kernels, which costs compile time (about 1 ms in
/// the passes and 2 ms in code generation for W1's kernel, whose object
/// grew from 856 to 1208 bytes) without a measurable warm gain on W1 or
/// W4a. Part of the cache key ([`super::FLAGS`]).
fn pipeline_options() -> PassBuilderOptions {
    let options = PassBuilderOptions::create();
    options.set_loop_unrolling(false);
    options
}

/// Runs the optimization pipeline ([`PIPELINE`]) on `module` and emits
/// it as an object file (or assembly text, `file`).
pub(super) fn optimize_and_emit(
    name: &str,
    module: &Module<'_>,
    machine: &TargetMachine,
    file: FileType,
) -> DeviceResult<Vec<u8>> {
    module
        .run_passes(PIPELINE, machine, pipeline_options())
        .map_err(|e| compile_error(name, format!("O3 pipeline: {e}")))?;
    let buf = machine
        .write_to_memory_buffer(module, file)
        .map_err(|e| compile_error(name, format!("code generation: {e}")))?;
    Ok(buf.as_slice().to_vec())
}

/// Compiles `kernel` at O3 into an object file for `target` (a
/// relocatable `.o` exporting the kernel under its name, with the
/// [`crate::cpu::KernelFn`] ABI), for linking ahead of time.
pub fn emit_object(kernel: &LoweredKernel, target: &TargetSpec) -> DeviceResult<Vec<u8>> {
    emit(kernel, target, FileType::Object)
}

/// The assembly text [`emit_object`] would assemble (to see which
/// instructions and registers the target's code uses).
pub fn emit_assembly(kernel: &LoweredKernel, target: &TargetSpec) -> DeviceResult<String> {
    let text = emit(kernel, target, FileType::Assembly)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

fn emit(kernel: &LoweredKernel, target: &TargetSpec, file: FileType) -> DeviceResult<Vec<u8>> {
    target.with_machine(|machine| {
        let cx = Context::create();
        let module = target_module(&cx, kernel, machine, false)?;
        optimize_and_emit(&kernel.name, &module, machine, file)
    })
}

/// A small vector loop (an FMA over 8-float vectors) compiled by
/// [`warm_up`].
const WARM_UP_IR: &str = "\
define void @morok_warm_up(ptr %out, ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %pa = getelementptr float, ptr %a, i64 %i
  %v = load <8 x float>, ptr %pa, align 4
  %w = call <8 x float> @llvm.fma.v8f32(<8 x float> %v, <8 x float> %v, <8 x float> %v)
  %po = getelementptr float, ptr %out, i64 %i
  store <8 x float> %w, ptr %po, align 4
  %next = add nsw i64 %i, 8
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
";

/// Prepares LLVM for the host's first kernel, once per process, on a
/// background thread: describes the host, makes a target machine for the
/// pool and compiles [`WARM_UP_IR`] through the pipeline and code
/// generation (discarding the object).
///
/// The first compilation in a process costs several milliseconds more
/// than later ones (the machine's subtarget, LLVM's lazily registered
/// passes and tables, the library's code paged in); done while the
/// program is still building its first graph, the first kernel does not
/// wait for it. Errors are left for the real compilation to report.
///
/// A process that exits meanwhile waits for the warm-up first (an
/// `atexit` handler registered after LLVM's static destructors, so it
/// runs before them): LLVM's globals must outlive the compilation.
pub(super) fn warm_up() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // SAFETY: registers a plain `extern "C" fn()`.
        let registered = unsafe { libc::atexit(wait_for_warm_up) } == 0;
        if !registered {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("morok-llvm-warm-up".to_string())
            .spawn(|| {
                let _done = WarmUpDone;
                let Ok(spec) = host_spec() else { return };
                let _ = spec.with_machine(|machine| {
                    let cx = Context::create();
                    let buf = inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(
                        WARM_UP_IR.as_bytes(),
                        "warm_up",
                    );
                    let module = cx
                        .create_module_from_ir(buf)
                        .map_err(|e| compile_error("warm_up", e.to_string()))?;
                    module.set_triple(&machine.get_triple());
                    module.set_data_layout(&machine.get_target_data().get_data_layout());
                    optimize_and_emit("warm_up", &module, machine, FileType::Object)
                });
            });
        if spawned.is_err() {
            // No thread: the first kernel pays the warm-up itself.
            drop(WarmUpDone);
        }
    });
}

/// Whether the warm-up has ended, and its waiters.
static WARM_UP: (Mutex<bool>, std::sync::Condvar) = (Mutex::new(false), std::sync::Condvar::new());

/// Marks the warm-up ended when dropped (also when it panics).
struct WarmUpDone;

impl Drop for WarmUpDone {
    fn drop(&mut self) {
        *WARM_UP.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        WARM_UP.1.notify_all();
    }
}

/// Blocks until the warm-up has ended (the `atexit` handler).
extern "C" fn wait_for_warm_up() {
    let mut done = WARM_UP.0.lock().unwrap_or_else(|e| e.into_inner());
    while !*done {
        done = WARM_UP.1.wait(done).unwrap_or_else(|e| e.into_inner());
    }
}
