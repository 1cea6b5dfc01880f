//! Scheduling: from a tensor-level graph to an ordered list of kernels.
//!
//! [`schedule()`] runs the pipeline:
//!
//! 1. `zero-size` ([`rangeify::zero_size`]): nodes without elements become
//!    constants, reductions over no elements their identity;
//! 2. `split-reduce` ([`rangeify::split_reduce`]): huge reductions in two stages;
//! 3. `realize` ([`rangeify::realize`]): where kernels split;
//! 4. `rangeify` ([`rangeify::indexing`]): movement ops become index
//!    arithmetic, realized nodes BUFFERIZE nodes;
//! 5. `simplify` ([`rangeify::index_simplify`], [`rangeify::reduce_simplify`],
//!    [`rangeify::reduce_unparented`],
//!    [`rangeify::gather_collapse`] and the shared [`crate::symbolic::symbolic`] rules);
//! 6. `buffers` ([`rangeify::buffer_removal`]): folding, inlining, dead axes;
//! 7. `row-fusion` ([`row_fusion`]): short row reductions (softmax's max
//!    and sum, layernorm's mean and variance) move into the kernel that
//!    broadcasts them back over the row;
//! 8. `kernelize` ([`kernelize`]): BUFFERIZE → STORE → KERNEL;
//!    `kernel-ranges` ([`rangeify::kernel_range_rules`]): each kernel's
//!    loops split, merged and cut at constant comparisons;
//! 9. `schedule` ([`ordering`]): items in dependency order and
//!    parallel groups; [`memory`]: storage reuse between intermediates.
//!
//! Each stage's IR is emitted with `tracing` (target `morok::ir`, level
//! TRACE, field `stage`). [`cache::schedule_cached`] skips the pipeline for
//! graphs whose structure was seen before.

pub mod cache;
mod driver;
pub mod instantiate;
mod items;
pub mod kernelize;
pub mod memory;
pub mod ordering;
pub mod rangeify;
pub mod row_fusion;

pub use cache::{
    schedule_cache_len, schedule_cache_limit, schedule_cached, set_schedule_cache_limit,
    DEFAULT_SCHEDULE_CACHE_LIMIT,
};
pub(crate) use driver::simplify_rules;
pub use driver::{pipeline_runs, schedule};
pub use items::{BufferKind, BufferSpec, Schedule, ScheduleError, ScheduleItem};
