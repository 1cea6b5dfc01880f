//! Why a rewrite failed: the error every pass built on the engine reports.

use crate::uop::UOp;
use std::fmt;
use std::sync::Arc;

/// A rewrite that failed: it did not converge, or a rule failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewriteError {
    /// The matcher's name.
    pub matcher: String,
    /// Dump of the node being rewritten when it failed.
    pub node: String,
    /// What went wrong.
    pub kind: RewriteErrorKind,
}

/// What went wrong in a [`RewriteError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RewriteErrorKind {
    /// The rewrite budget ran out (the rules keep producing new nodes).
    Diverged {
        /// How many rewrites were applied before giving up.
        rewrites: usize,
    },
    /// A rule returned an error.
    RuleFailed {
        /// The rule's index in the matcher (registration order).
        rule: usize,
        /// Where the rule was registered (`file:line:column`).
        location: String,
        /// The rule's message.
        message: String,
    },
}

impl RewriteError {
    /// An error of matcher `matcher` at `node` (dumped, truncated).
    pub fn new(matcher: &str, node: &Arc<UOp>, kind: RewriteErrorKind) -> RewriteError {
        RewriteError {
            matcher: matcher.to_string(),
            node: truncate(node.tree()),
            kind,
        }
    }
}

impl fmt::Display for RewriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RewriteErrorKind::Diverged { rewrites } => write!(
                f,
                "pattern set `{}` did not converge after {rewrites} rewrites; last node:\n{}",
                self.matcher, self.node
            ),
            RewriteErrorKind::RuleFailed {
                rule,
                location,
                message,
            } => write!(
                f,
                "rule #{rule} of pattern set `{}` (at {location}) failed: {message}; node:\n{}",
                self.matcher, self.node
            ),
        }
    }
}

impl std::error::Error for RewriteError {}

fn truncate(s: String) -> String {
    const MAX_LINES: usize = 40;
    let lines: Vec<&str> = s.lines().collect();
    if lines.len() <= MAX_LINES {
        s
    } else {
        format!(
            "{}\n... ({} more lines)",
            lines[..MAX_LINES].join("\n"),
            lines.len() - MAX_LINES
        )
    }
}
