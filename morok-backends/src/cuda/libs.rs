//! Finding the CUDA libraries before `cudarc` touches them: `cudarc`
//! loads the driver (`libcuda`) and NVRTC (`libnvrtc`) on first use and
//! panics when one is missing, so every entry point of this backend asks
//! here first and turns absence into an error naming what is missing.
//!
//! NVRTC is found by the dynamic loader's search (`LD_LIBRARY_PATH`, the
//! system's library directories), or at `MOROK_NVRTC_PATH` (the library
//! file or its directory, for example the `nvidia/cuda_nvrtc/lib`
//! directory of the `nvidia-cuda-nvrtc-cu12` wheel): that file is loaded
//! first and stays loaded, and the loader then hands it to `cudarc` when
//! `cudarc` asks for the same library by its name.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The file names of NVRTC 12 tried inside a `MOROK_NVRTC_PATH` directory.
const NVRTC_FILES: [&str; 2] = ["libnvrtc.so.12", "libnvrtc.so"];

/// `Ok` when the CUDA driver library can be loaded, else an error naming
/// it (no GPU driver installed on this machine).
pub fn driver_present() -> Result<(), String> {
    // SAFETY: only tries to open the library by name (no symbol is called).
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(
            "CUDA: the driver library (libcuda.so) was not found: no NVIDIA driver on this \
             machine (or not on the loader's path)"
                .to_string(),
        )
    }
}

/// `Ok` when NVRTC can be loaded (after `MOROK_NVRTC_PATH`, when set, was
/// loaded), else an error naming the library and where it was looked for.
pub fn nvrtc_present() -> Result<(), String> {
    preload_nvrtc()?;
    // SAFETY: only tries to open the library by name (no symbol is called).
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(
            "CUDA: NVRTC (libnvrtc.so.12) was not found: set MOROK_NVRTC_PATH to the library \
             or its directory, or put its directory on LD_LIBRARY_PATH (pip package \
             `nvidia-cuda-nvrtc-cu12`, see docs/CUDA.md)"
                .to_string(),
        )
    }
}

/// Loads the NVRTC library `MOROK_NVRTC_PATH` names, once per process; the
/// handle is kept for the life of the process (`cudarc` holds its own
/// handle to the same library after that).
fn preload_nvrtc() -> Result<(), String> {
    static LOADED: OnceLock<Result<Option<libloading::Library>, String>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        let Some(path) = std::env::var_os("MOROK_NVRTC_PATH").filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        let path = PathBuf::from(path);
        let file = if path.is_dir() {
            NVRTC_FILES
                .iter()
                .map(|f| path.join(f))
                .find(|p| p.is_file())
                .ok_or_else(|| {
                    format!(
                        "CUDA: MOROK_NVRTC_PATH={} holds none of {}",
                        path.display(),
                        NVRTC_FILES.join(", ")
                    )
                })?
        } else {
            path
        };
        // SAFETY: loading NVRTC runs only its initializers, as cudarc's
        // own load of the library would.
        unsafe { libloading::Library::new(&file) }
            .map(Some)
            .map_err(|e| format!("CUDA: cannot load MOROK_NVRTC_PATH={}: {e}", file.display()))
    });
    loaded.as_ref().map(|_| ()).map_err(Clone::clone)
}
