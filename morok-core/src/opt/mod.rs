//! The kernel optimizer: the step of the per-kernel pipeline
//! ([`crate::pipeline::compile_program`]) that rewrites a kernel AST's
//! ranges (upcast, unroll, threads, ...) before lowering.
//!
//! Today it is the identity: the kernel is lowered as scheduled. Its
//! inputs are already what the optimizer needs: the kernel AST, the
//! target's capabilities and, for beam search, a device that can compile
//! and time candidate programs ([`crate::device::Device`]).

use crate::caps::Caps;
use crate::device::Device;
use crate::uop::UOp;
use std::sync::Arc;

/// How kernels are optimized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptMode {
    /// No optional optimization (`MOROK_NOOPT=1`).
    None,
    /// Hand-written heuristics (the default).
    #[default]
    Heuristics,
    /// Beam search of the given width over measured candidates.
    Beam(usize),
}

/// What the optimizer knows about the target of one kernel.
pub struct OptTarget<'a> {
    /// What the target's renderer evaluates natively.
    pub caps: Caps,
    /// The device that will run the kernel (beam search compiles and times
    /// candidates on it).
    pub device: Option<&'a dyn Device>,
}

/// Why a kernel could not be optimized.
#[derive(Debug, thiserror::Error)]
#[error("optimizing kernel `{kernel}` failed: {what}")]
pub struct OptError {
    /// The kernel's name.
    pub kernel: String,
    /// What went wrong.
    pub what: String,
}

/// Optimizes one kernel AST for `target` (see the module docs: the
/// identity for now, whatever the mode).
pub fn optimize(
    ast: &Arc<UOp>,
    _mode: OptMode,
    _target: &OptTarget<'_>,
) -> Result<Arc<UOp>, OptError> {
    Ok(ast.clone())
}
