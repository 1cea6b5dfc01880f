//! The rewrite engine: op-indexed pattern matchers and the fixpoint graph
//! traversal every compiler stage is built on.

mod engine;
mod error;
mod into_uop;
mod matcher;

pub use engine::{
    graph_rewrite, graph_rewrite_bottom_up, graph_rewrite_with, Direction, RewriteOptions,
};
pub use error::{RewriteError, RewriteErrorKind};
pub use into_uop::IntoUOp;
pub use matcher::{PatternMatcher, RuleError, RuleFn};

#[cfg(test)]
mod tests;
