//! The device the runtime compiles for and keeps buffers on.

use morok_backends::CpuDevice;
use std::sync::OnceLock;

/// The process-wide CPU device (configured from the environment on first
/// use: `MOROK_CACHE_DIR`, `MOROK_THREADS`, `MOROK_CC`).
pub(crate) fn current() -> &'static CpuDevice {
    static DEVICE: OnceLock<CpuDevice> = OnceLock::new();
    DEVICE.get_or_init(CpuDevice::new)
}
