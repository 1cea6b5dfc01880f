//! Helpers shared by the core's integration tests.

use morok_core::{Arg, DType, Op, UOp};
use std::sync::Arc;

/// An `index` variable (DEFINE_VAR) named `name` over `[min, max]`.
pub fn index_var(name: &str, min: i64, max: i64) -> Arc<UOp> {
    UOp::new(
        Op::DefineVar,
        DType::INDEX,
        Vec::new(),
        Arg::Var {
            name: name.into(),
            min,
            max,
        },
    )
}
