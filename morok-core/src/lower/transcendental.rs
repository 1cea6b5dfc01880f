//! Transcendental decompositions (filled in below).

use crate::render::Caps;
use crate::rewrite::PatternMatcher;

/// Rules that decompose the transcendental ops `caps` lacks.
pub fn rules(_caps: &Caps) -> PatternMatcher {
    PatternMatcher::new("transcendental")
}
