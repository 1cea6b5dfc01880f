//! [`IntoUOp`]: what the right-hand side of a `patterns!` rule may produce.

use crate::uop::UOp;
use std::sync::Arc;

/// A replacement node, owned or borrowed. A `~>` rule's right-hand side
/// is any `IntoUOp`, a `=>` rule's is an `Option` of one; pattern bindings
/// are `&Arc<UOp>`, so `~> x` and `~> x.clone()` both work.
#[diagnostic::on_unimplemented(
    message = "a rewrite rule must produce `Arc<UOp>` or `&Arc<UOp>`, not `{Self}`",
    label = "this is the rule's replacement",
    note = "`~>` rules produce a node; `=>` rules produce an `Option` of one"
)]
pub trait IntoUOp {
    /// The replacement as an owned node.
    fn into_uop(self) -> Arc<UOp>;
}

impl IntoUOp for Arc<UOp> {
    fn into_uop(self) -> Arc<UOp> {
        self
    }
}

impl IntoUOp for &Arc<UOp> {
    fn into_uop(self) -> Arc<UOp> {
        self.clone()
    }
}
