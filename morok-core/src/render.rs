//! The renderer interface: a [`LoweredKernel`] becomes source code for a
//! target (C, LLVM IR, CUDA C, ...). Renderers live in `morok-backends`;
//! the core only defines what they promise and what they can do
//! ([`Caps`], in [`crate::caps`]), which decides the decompositions
//! lowering applies.

pub use crate::caps::{Caps, OpSet};
use crate::lower::LoweredKernel;

/// A rendered kernel: its source and the symbol to call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedKernel {
    /// Complete source of one translation unit / module.
    pub source: String,
    /// The exported entry point's name.
    pub entry: String,
}

/// A linear program the renderer cannot express.
#[derive(Debug, thiserror::Error)]
#[error("{renderer} renderer cannot render {node}: {what}")]
pub struct RenderError {
    /// The renderer's name.
    pub renderer: String,
    /// The offending node, printed.
    pub node: String,
    /// Why.
    pub what: String,
}

/// Turns linear programs into source code for one target.
pub trait Renderer: Send + Sync {
    /// Short name (`"c"`, `"llvm"`, ...), used in cache keys and errors.
    fn name(&self) -> &str;

    /// What the target evaluates natively.
    fn caps(&self) -> Caps;

    /// Renders a lowered kernel. The entry point takes the kernel's buffers
    /// in slot order; its calling convention is the renderer's and the
    /// matching device's business.
    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError>;
}
