//! What the user can inspect about the kernels that produced a tensor.

use crate::device::Device;
use morok_core::device::CompiledKernel;
use std::sync::Arc;

/// One compiled kernel that ran to produce a realized tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The kernel's name (as in the generated code).
    pub name: String,
    /// The backend that compiled and ran it (`CPU`, `LLVM`, ...).
    pub backend: String,
    /// The device's code generator and its version, from
    /// [`crate::device::Backend::describe`] (`C (cc: gcc …)`, `LLVM 19.1.7
    /// (znver4, …)`).
    pub compiler: String,
    /// The generated source code.
    pub code: String,
}

/// A kernel that ran, as a realized tensor records it: the compiled
/// kernel and the device it ran on. The [`KernelInfo`] strings (the source
/// is kilobytes, the compiler description is formatted) are only built
/// when [`crate::Tensor::kernels`] asks, not on every realization: copying
/// them on each warm call took a tenth of a small model's call.
#[derive(Clone)]
pub(crate) struct KernelRun {
    kernel: Arc<dyn CompiledKernel>,
    device: Device,
}

impl KernelRun {
    /// The record of `kernel` run on `device`.
    pub(crate) fn new(kernel: Arc<dyn CompiledKernel>, device: Device) -> KernelRun {
        KernelRun { kernel, device }
    }

    /// What the user sees of it.
    pub(crate) fn info(&self) -> KernelInfo {
        KernelInfo {
            name: self.kernel.name().to_string(),
            backend: self.device.name().to_string(),
            compiler: self.device.backend().describe(),
            code: self.kernel.source().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    /// A row sum of `x`, realized.
    fn realized_row_sum(x: &Tensor) -> Tensor {
        x.sum(Some(&[1]), false).unwrap().realize().unwrap()
    }

    #[test]
    fn realized_tensors_share_their_kernels_and_list_them_in_full() {
        let x = Tensor::from_vec((0..64).map(|i| i as f32).collect(), &[8, 8]).unwrap();
        let (a, b) = (realized_row_sum(&x), realized_row_sum(&x));
        // the second call records the cached kernel itself, no copy of it
        let (ra, rb) = (a.inner_kernels(), b.inner_kernels());
        assert_eq!((ra.len(), rb.len()), (1, 1));
        assert!(std::sync::Arc::ptr_eq(&ra[0].kernel, &rb[0].kernel));
        // what the user sees is built from it when asked
        let info = b.kernels();
        let device = b.device().unwrap();
        assert_eq!(info.len(), 1);
        assert_eq!(info[0].name, rb[0].kernel.name());
        assert_eq!(info[0].backend, device.name());
        assert_eq!(info[0].compiler, device.backend().describe());
        assert_eq!(info[0].code, rb[0].kernel.source());
        assert!(info[0].code.contains(&info[0].name));
        assert_eq!(a.kernels(), info);
    }
}
