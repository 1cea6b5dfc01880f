//! Symbolic simplification: constant folding, identities, index algebra.

pub mod bounds;
pub mod eval;

use crate::rewrite::PatternMatcher;

/// The general-purpose simplification rules, usable at every level.
pub fn symbolic() -> PatternMatcher {
    PatternMatcher::new("symbolic")
}
