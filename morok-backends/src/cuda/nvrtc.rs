//! Compiling CUDA C++: NVRTC (through `cudarc`, loaded at run time) turns
//! a source into PTX or a cubin (the GPU's machine code, which loads
//! without the driver's JIT) for one `sm_XX`; `ptxas` (when one is found)
//! assembles the PTX into a cubin as well, the check that the PTX is
//! valid for that architecture which CI runs without a GPU.
//!
//! The architecture is the device's own at run time; for compiling
//! without a GPU it is `MOROK_CUDA_ARCH` (`sm_80` when unset). `ptxas`
//! is `MOROK_PTXAS` or the first `ptxas` on `PATH`.

use super::libs::nvrtc_present;
use morok_core::device::DeviceError;
use std::path::PathBuf;
use std::process::Command;

/// The architecture compiled for without a GPU: `MOROK_CUDA_ARCH`
/// (`sm_90`, or `90`), else `sm_80`.
pub fn default_arch() -> String {
    crate::settings::env_setting("MOROK_CUDA_ARCH", "sm_NN or NN (e.g. sm_90)", |a| {
        let digits = a.strip_prefix("sm_").unwrap_or(a);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| format!("sm_{digits}"))
    })
    .unwrap_or_else(|| "sm_80".to_string())
}

/// NVRTC's options for kernels of `arch`: IEEE float division and square
/// root, denormals kept, no contraction of `a * b + c` (the renderer
/// writes `fma` where it wants one), every unannotated function a device
/// function (the C renderer's helpers).
fn options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--fmad=false".to_string(),
        "--prec-div=true".to_string(),
        "--prec-sqrt=true".to_string(),
        "--ftz=false".to_string(),
        "--device-as-default-execution-space".to_string(),
        "--std=c++17".to_string(),
    ]
}

/// What NVRTC hands back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// PTX text (the driver compiles it when the module loads).
    Ptx,
    /// A cubin for the architecture (loads as it is).
    Cubin,
}

impl Output {
    /// The cache file extension.
    fn extension(self) -> &'static str {
        match self {
            Output::Ptx => "ptx",
            Output::Cubin => "cubin",
        }
    }
}

/// Compiles `source` (kernel `name`) to PTX for `arch` with NVRTC; a
/// rejected source is a [`DeviceError::Compile`] holding NVRTC's log, a
/// missing NVRTC a [`DeviceError::NoCompiler`] naming it.
pub fn compile_ptx(source: &str, name: &str, arch: &str) -> Result<String, DeviceError> {
    let bytes = compile(source, name, arch, Output::Ptx)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Compiles `source` (kernel `name`) for `arch` with NVRTC into `output`
/// (PTX without its terminating NUL, or the cubin); errors as
/// [`compile_ptx`]'s.
pub fn compile(
    source: &str,
    name: &str,
    arch: &str,
    output: Output,
) -> Result<Vec<u8>, DeviceError> {
    use cudarc::nvrtc::{result, sys};
    nvrtc_present().map_err(DeviceError::NoCompiler)?;
    let bad = |reason: &str| DeviceError::BadArgs {
        what: format!("CUDA kernel `{name}`"),
        reason: reason.to_string(),
    };
    let src = std::ffi::CString::new(source).map_err(|_| bad("the source holds a NUL byte"))?;
    let file = std::ffi::CString::new(format!("{name}.cu"))
        .map_err(|_| bad("the kernel name holds a NUL byte"))?;
    let failed = |stage: &str, e: &dyn std::fmt::Display| DeviceError::Compile {
        kernel: name.to_string(),
        compiler: "NVRTC".to_string(),
        stderr: format!("{stage}: {e}"),
    };
    let opts = options(arch);
    let prog = result::create_program(&src, Some(&file)).map_err(|e| failed("creating", &e))?;
    // SAFETY: `prog` was created above and is destroyed once, below; the
    // buffers handed to NVRTC are as long as the sizes it reported.
    let out = unsafe {
        let compiled = result::compile_program(prog, &opts);
        let out = match compiled {
            Err(_) => {
                let log = result::get_program_log(prog).unwrap_or_default();
                let log: Vec<u8> = log
                    .iter()
                    .map(|&c| c as u8)
                    .take_while(|&c| c != 0)
                    .collect();
                Err(DeviceError::Compile {
                    kernel: name.to_string(),
                    compiler: format!("NVRTC {}", opts.join(" ")),
                    stderr: String::from_utf8_lossy(&log).into_owned(),
                })
            }
            Ok(()) => match output {
                Output::Ptx => result::get_ptx(prog)
                    .map(|ptx| {
                        ptx.iter()
                            .map(|&c| c as u8)
                            .take_while(|&c| c != 0)
                            .collect()
                    })
                    .map_err(|e| failed("reading the PTX", &e)),
                Output::Cubin => {
                    let mut size = 0usize;
                    sys::nvrtcGetCUBINSize(prog, &mut size)
                        .result()
                        .map_err(|e| failed("sizing the cubin", &e))
                        .and_then(|()| {
                            let mut cubin = vec![0u8; size];
                            sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast())
                                .result()
                                .map(|()| cubin)
                                .map_err(|e| failed("reading the cubin", &e))
                        })
                }
            },
        };
        let _ = result::destroy_program(prog);
        out
    };
    out
}

/// [`compile_ptx`] through the on-disk cache in `dir` (see
/// [`compile_cached`]).
pub fn compile_ptx_cached(
    source: &str,
    name: &str,
    arch: &str,
    dir: &std::path::Path,
) -> Result<String, DeviceError> {
    let bytes = compile_cached(source, name, arch, Output::Ptx, dir)?;
    String::from_utf8(bytes).map_err(|_| DeviceError::Compile {
        kernel: name.to_string(),
        compiler: "NVRTC".to_string(),
        stderr: "the PTX is not UTF-8".to_string(),
    })
}

/// [`compile`] through the on-disk cache in `dir` (`<cache dir>/cuda/`):
/// an entry `<key>.ptx` or `<key>.cubin` (blake3 of the source, NVRTC's
/// options and version) with its checksum is read instead of compiling;
/// a missing or corrupt one is compiled and stored. A cache that cannot
/// be written only costs the compile (the output is still returned).
pub fn compile_cached(
    source: &str,
    name: &str,
    arch: &str,
    output: Output,
    dir: &std::path::Path,
) -> Result<Vec<u8>, DeviceError> {
    let version = nvrtc_version().map_err(DeviceError::NoCompiler)?;
    let mut key = blake3::Hasher::new();
    key.update(source.as_bytes());
    for o in options(arch) {
        key.update(b"\0").update(o.as_bytes());
    }
    key.update(format!("\0nvrtc {}.{}", version.0, version.1).as_bytes());
    let key = key.finalize().to_hex();
    let ext = output.extension();
    let path = dir.join(format!("{key}.{ext}"));
    let sum_path = dir.join(format!("{key}.{ext}.blake3"));
    if let Some(bytes) = crate::disk_cache::read_checked(&path, &sum_path) {
        return Ok(bytes);
    }
    let bytes = compile(source, name, arch, output)?;
    if let Err(e) = crate::disk_cache::store(dir, &path, &sum_path, &bytes) {
        crate::cpu::c::compiler::warn_cache_unusable(dir, &e);
    }
    Ok(bytes)
}

/// NVRTC's version (`(12, 9)`), or why it is not available.
pub fn nvrtc_version() -> Result<(i32, i32), String> {
    nvrtc_present()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is present (checked above); the call writes two ints.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if status == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        Ok((major, minor))
    } else {
        Err(format!("CUDA: nvrtcVersion failed: {status:?}"))
    }
}

/// The `ptxas` to assemble with: `MOROK_PTXAS`, else `ptxas` on `PATH`;
/// `None` where there is none.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MOROK_PTXAS").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("ptxas"))
        .find(|p| p.is_file())
}

/// Assembles `ptx` for `arch` with the `ptxas` at `ptxas` into a cubin
/// (its bytes); `ptxas`'s messages are the error where it rejects the PTX.
pub fn assemble(
    ptxas: &std::path::Path,
    ptx: &str,
    name: &str,
    arch: &str,
) -> Result<Vec<u8>, DeviceError> {
    let io = |what: &str| {
        let what = what.to_string();
        move |source| DeviceError::Io { what, source }
    };
    let dir = tempfile::tempdir().map_err(io("creating a directory for ptxas"))?;
    let input = dir.path().join(format!("{name}.ptx"));
    let output = dir.path().join(format!("{name}.cubin"));
    std::fs::write(&input, ptx).map_err(io("writing the PTX for ptxas"))?;
    let out = Command::new(ptxas)
        .arg(format!("--gpu-name={arch}"))
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(io(&format!("running {}", ptxas.display())))?;
    if !out.status.success() {
        return Err(DeviceError::Compile {
            kernel: name.to_string(),
            compiler: format!("{} --gpu-name={arch}", ptxas.display()),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    std::fs::read(&output).map_err(io("reading ptxas's cubin"))
}
