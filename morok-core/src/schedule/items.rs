//! What scheduling produces: the kernels in order with their buffers, and
//! why a graph could not be scheduled.

use crate::dtype::DType;
use crate::rewrite::RewriteError;
use crate::shape::ShapeError;
use crate::uop::UOp;
use std::sync::Arc;

/// A scheduled computation: kernels in a valid order plus their buffers.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// The kernels, in an order that respects every dependency (group by
    /// group, see `groups`).
    pub items: Vec<ScheduleItem>,
    /// Kahn levels: indices into `items`; the kernels of one group are
    /// independent of each other and depend only on earlier groups.
    pub groups: Vec<Vec<usize>>,
    /// Every buffer the items use (inputs, outputs, intermediates).
    pub buffers: Vec<BufferSpec>,
    /// Per root: its value as a tensor-level node over a buffer, e.g.
    /// `RESHAPE(BUFFER{new id}, root shape)` (a root that already is a view
    /// of an input buffer is returned unchanged).
    pub outputs: Vec<Arc<UOp>>,
}

/// One kernel to run.
#[derive(Clone, Debug)]
pub struct ScheduleItem {
    /// The kernel AST (see `docs/ARCHITECTURE.md`, "Kernel AST"):
    /// `SINK(END(STORE(INDEX(DEFINE_GLOBAL(0), idx), value), ranges…))`.
    pub ast: Arc<UOp>,
    /// The buffer id bound to each DEFINE_GLOBAL slot, in slot order: slot 0
    /// is the buffer the kernel writes, then the buffers it reads in order
    /// of first appearance.
    pub buffers: Vec<u64>,
}

/// What a buffer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// Provided by the caller (a BUFFER of the input graph).
    Input,
    /// Holds a root's value; returned to the caller.
    Output,
    /// Written and read by kernels of this schedule only.
    Intermediate,
}

/// A buffer of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferSpec {
    /// Buffer id (as in `Arg::Buffer`).
    pub id: u64,
    /// Element type.
    pub dtype: DType,
    /// Number of elements.
    pub size: usize,
    /// Role of the buffer.
    pub kind: BufferKind,
    /// Memory the buffer lives in: intermediates whose lifetimes do not
    /// overlap share a storage id (allocate each storage once, with the
    /// byte size of its largest member); inputs and outputs use their own id.
    pub storage: u64,
}

/// Why a graph could not be scheduled.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// A node of the input graph is ill-shaped.
    #[error("ill-shaped graph: {0}")]
    Shape(#[from] ShapeError),
    /// A rewrite stage did not converge.
    #[error("{0}")]
    Rewrite(#[from] RewriteError),
    /// The scheduler has no rule for an op.
    #[error("cannot schedule {op} of shape {shape:?}: {reason}")]
    Unsupported {
        /// The op's dump name.
        op: String,
        /// Its tensor shape.
        shape: Vec<usize>,
        /// What is missing.
        reason: String,
    },
}

impl From<ScheduleError> for crate::rewrite::RuleError {
    /// A scheduling rule that failed (see `rewrite::RuleError`).
    fn from(e: ScheduleError) -> Self {
        crate::rewrite::RuleError::new(e.to_string())
    }
}
