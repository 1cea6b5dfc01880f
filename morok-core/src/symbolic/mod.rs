//! Symbolic simplification: constant folding, identities, index algebra.
//! (Rule sets land with the foundation issue's symbolic work.)

use crate::rewrite::PatternMatcher;

/// The general-purpose simplification rules, usable at every level.
pub fn symbolic() -> PatternMatcher {
    PatternMatcher::new("symbolic")
}
