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
use morok_core::lower::LoweredKernel;
use std::sync::OnceLock;

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

/// Initializes the LLVM targets once: the native one (JIT) and all
/// others (object files for other triples).
fn init_targets() -> DeviceResult<()> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        Target::initialize_all(&InitializationConfig::default());
        Target::initialize_native(&InitializationConfig::default())
    })
    .clone()
    .map_err(|e| DeviceError::NoCompiler(format!("LLVM native target: {e}")))
}

impl TargetSpec {
    /// The host: its triple, real CPU name and feature string, so the
    /// code uses every vector extension the machine has (AVX2, AVX-512).
    pub fn host() -> DeviceResult<TargetSpec> {
        init_targets()?;
        Ok(TargetSpec {
            triple: TargetMachine::get_default_triple()
                .as_str()
                .to_string_lossy()
                .into_owned(),
            cpu: TargetMachine::get_host_cpu_name().to_string(),
            features: TargetMachine::get_host_cpu_features().to_string(),
        })
    }

    /// A target machine for this spec at O3. `reloc` is PIC for objects
    /// (they may be linked into shared libraries and are position
    /// independent in the JIT).
    pub(super) fn machine(&self) -> DeviceResult<TargetMachine> {
        init_targets()?;
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
/// verified.
pub(super) fn target_module<'ctx>(
    cx: &'ctx Context,
    kernel: &LoweredKernel,
    machine: &TargetMachine,
) -> DeviceResult<Module<'ctx>> {
    let module =
        build_module(cx, kernel).map_err(|e| compile_error(&kernel.name, e.to_string()))?;
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    module
        .verify()
        .map_err(|e| compile_error(&kernel.name, format!("invalid IR: {e}")))?;
    Ok(module)
}

/// Runs the O3 pipeline on `module` and emits it as an object file (or
/// assembly text, `file`).
pub(super) fn optimize_and_emit(
    name: &str,
    module: &Module<'_>,
    machine: &TargetMachine,
    file: FileType,
) -> DeviceResult<Vec<u8>> {
    module
        .run_passes("default<O3>", machine, PassBuilderOptions::create())
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
    let machine = target.machine()?;
    let cx = Context::create();
    let module = target_module(&cx, kernel, &machine)?;
    optimize_and_emit(&kernel.name, &module, &machine, file)
}
