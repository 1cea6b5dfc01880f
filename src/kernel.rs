//! What the user can inspect about the kernels that produced a tensor.

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
