//! Shape rules, in one place.
//!
//! The pure functions of [`rules`] (broadcasting, matmul, reductions,
//! reshape with `-1`, permute / transpose / expand, linear and conv2d),
//! [`axis_edits`] (flip, squeeze, unsqueeze, flatten, unflatten, repeat),
//! [`indexing`] (`t[...]` with `IndexEntry`, gather, index_select,
//! masked_fill, scatter), and the private files `conv.rs` (n-d and
//! transposed convolutions), `einsum.rs` (the equation's parsing, the
//! result shape and the `EinsumPlan`), `joining.rs` (cat, stack),
//! `padding.rs` (the padding convention, `Pads`), `pooling.rs`,
//! `resample.rs` (interpolate), `selection.rs` (roll, diagonal, diag,
//! unfold, repeat_interleave, shrink), `losses.rs` and `slicing.rs`
//! are the only definition of the shape rules. They are generic over a
//! [`Dim`]: the tensor API calls them with `usize` dims at run time and the
//! macros with symbolic [`SymDim`]s at expansion time, so both report the
//! same error text.
//!
//! This module depends on nothing else in the crate; the shape of a UOp
//! node (checked and cached on the node) is `uop::shape_of`, built on it.

mod attention;
pub mod axis_edits;
mod conv;
mod dim;
mod dims;
mod einsum;
pub mod indexing;
mod joining;
mod losses;
mod padding;
mod pooling;
mod resample;
pub mod rules;
mod selection;
mod slicing;

pub use attention::attention_shape;
pub use axis_edits::{
    flatten_shape, flip_axes, repeat_shape, squeeze_all_shape, squeeze_shape, unflatten_shape,
    unsqueeze_shape,
};
pub use conv::{conv_nd_shape, conv_transpose_nd_shape, ConvNd};
pub use dim::{Dim, SymDim};
pub use dims::{shape_text, Dims, Shape, ShapeError};
pub use einsum::{einsum_plan, einsum_shape, EinsumLabel, EinsumOperand, EinsumPlan};
pub use indexing::{
    consumed_axes, gather_shape, index_select_shape, index_shape, masked_shape, scatter_shape,
    IndexEntry,
};
pub use joining::{cat_shape, stack_shape};
pub use losses::{class_loss_shape, cross_entropy_shape, weighted_loss_shape};
pub use padding::{pad_mode_shape, pad_shape, padded_len, window_count, PadMode, Pads};
pub use pooling::{pool_shape, unpool_shape, PoolGeometry};
pub use resample::{interpolate_scale_shape, interpolate_shape, InterpolateMode};
pub use rules::*;
pub use selection::{
    diag_shape, diagonal_shape, repeat_interleave_shape, roll_shape, shrink_shape, unfold_shape,
};
pub use slicing::{slice_shape, Slice};
