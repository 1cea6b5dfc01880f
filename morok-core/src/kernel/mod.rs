//! The kernel layer: facts about and surgery on one kernel AST that the
//! scheduler's kernel passes, the optimizer and lowering all use. It sits
//! below all three, so none of them imports another for these (the
//! scheduling passes import only this layer, the optimizer never imports
//! lowering, lowering never imports the optimizer).
//!
//! - [`ranges`]: axis ids, range sizes, and [`replace_range`], the range
//!   surgery every range split is built from;
//! - [`access`]: what an `INDEX` addresses;
//! - [`vectors`]: how an upcast range is cut into vectors of the target;
//! - [`reduce_order`]: which reductions may be reordered, and the balanced
//!   combination of partial results;
//! - [`work`]: the one work estimate of a kernel (loop-nest iterations),
//!   read by the optimizer's thread step and the launch.

pub mod access;
pub mod ranges;
pub mod reduce_order;
pub mod vectors;
pub mod work;

pub use access::{indexes_global, indexes_shared, reads_what_others_write};
pub use ranges::{
    axis_id, next_axis_id, outer_ranges_of_reduce, range_size, replace_range, uses_range,
};
pub use reduce_order::{combine_pairwise, reorderable};
pub use vectors::{vector_pieces, VectorPiece};
pub use work::{loop_nest_iterations, threads_for_work, MIN_WORK_PER_THREAD};
