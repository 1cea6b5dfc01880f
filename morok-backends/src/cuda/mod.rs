//! The CUDA backend (feature `cuda`): CUDA C rendered from the linear
//! program, compiled by NVRTC for a chosen `sm_XX` and assembled by
//! `ptxas` when one is present (the compile-only path CI runs without a
//! GPU), and the device `CUDA` ([`runtime`]: buffers with an LRU cache of
//! freed memory, device or unified memory, cubins cached on disk, launches
//! on a stream, copies between GPUs).
//!
//! The libraries come from `cudarc` with dynamic loading: nothing of CUDA
//! is needed to build, and each entry point checks that the library it
//! needs exists ([`libs`]) before `cudarc` would panic on its absence.

pub mod buffer;
pub mod libs;
pub mod nvrtc;
pub mod render;
pub mod runtime;
pub mod target;

pub use render::{CudaRenderer, CUDA_LAUNCH_LIMITS};
pub use runtime::CudaDevice;
pub use target::{compute_capability, cuda_target};

/// Opens the CUDA device `ordinal` for the device registry (`CUDA`): an
/// error naming what is missing where the driver or NVRTC is not found,
/// or where the machine has no such GPU.
pub fn open_device(
    ordinal: usize,
) -> Result<std::sync::Arc<dyn morok_core::device::Device>, String> {
    libs::driver_present()?;
    libs::nvrtc_present()?;
    Ok(std::sync::Arc::new(CudaDevice::open(ordinal)?))
}
