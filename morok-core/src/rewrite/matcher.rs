//! [`PatternMatcher`]: an ordered set of rewrite rules indexed by op.
//!
//! A rule is a closure `(&Arc<UOp>, &mut C) -> Option<Arc<UOp>>` registered
//! for one or more ops (or for any op); a rule that can fail returns
//! `Result<Option<Arc<UOp>>, RuleError>` ([`PatternMatcher::try_rule`]),
//! and its failure reaches the caller of the rewrite as a
//! [`RewriteError`] naming the matcher, the rule and the node. Matching a node looks up the rules
//! of its op in a table (O(1)), tries them in registration order, then
//! tries the wildcard rules. The `patterns!` macro builds matchers; code
//! can also register closures directly with [`PatternMatcher::rule`].

use super::error::{RewriteError, RewriteErrorKind};
use crate::uop::{Op, UOp};
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

/// A rewrite rule: returns the replacement, `None` if it does not apply,
/// or an error if it applies but cannot build its replacement.
pub type RuleFn<C> = dyn Fn(&Arc<UOp>, &mut C) -> Result<Option<Arc<UOp>>, RuleError> + Send + Sync;

/// Why a rule failed (a rule's own error; the engine adds the matcher,
/// the rule and the node to make a [`RewriteError`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// What went wrong.
    pub message: String,
}

impl RuleError {
    /// A failure with a message.
    pub fn new(message: impl Into<String>) -> RuleError {
        RuleError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuleError {}

impl From<RewriteError> for RuleError {
    /// A nested rewrite that failed inside a rule.
    fn from(e: RewriteError) -> RuleError {
        RuleError::new(e.to_string())
    }
}

impl From<String> for RuleError {
    fn from(message: String) -> RuleError {
        RuleError::new(message)
    }
}

impl From<&str> for RuleError {
    fn from(message: &str) -> RuleError {
        RuleError::new(message)
    }
}

struct Rule<C> {
    /// Position in registration order (keeps the order across the per-op
    /// table and the wildcard list).
    order: usize,
    /// Where the rule was registered (the rule's line for `patterns!`).
    location: &'static Location<'static>,
    f: Arc<RuleFn<C>>,
}

impl<C> Clone for Rule<C> {
    fn clone(&self) -> Self {
        Rule {
            order: self.order,
            location: self.location,
            f: self.f.clone(),
        }
    }
}

/// An op-indexed set of rewrite rules with context type `C`.
pub struct PatternMatcher<C = ()> {
    name: String,
    by_op: Vec<Vec<Rule<C>>>,
    wildcards: Vec<Rule<C>>,
    len: usize,
}

impl<C> Clone for PatternMatcher<C> {
    fn clone(&self) -> Self {
        PatternMatcher {
            name: self.name.clone(),
            by_op: self.by_op.clone(),
            wildcards: self.wildcards.clone(),
            len: self.len,
        }
    }
}

impl<C> PatternMatcher<C> {
    /// An empty matcher; `name` appears in error messages and debug dumps.
    pub fn new(name: impl Into<String>) -> Self {
        PatternMatcher {
            name: name.into(),
            by_op: (0..Op::COUNT).map(|_| Vec::new()).collect(),
            wildcards: Vec::new(),
            len: 0,
        }
    }

    /// The matcher's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of rules (a rule registered for several ops counts once).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no rules.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Registers a rule for the given ops; an empty list means any op.
    #[track_caller]
    pub fn rule(
        &mut self,
        ops: &[Op],
        f: impl Fn(&Arc<UOp>, &mut C) -> Option<Arc<UOp>> + Send + Sync + 'static,
    ) -> &mut Self
    where
        C: 'static,
    {
        self.try_rule(ops, move |n, c| Ok(f(n, c)))
    }

    /// Registers a rule that can fail: its error stops the rewrite and is
    /// returned as a [`RewriteError`] naming this matcher, the rule (its
    /// index and where it was registered) and the node.
    #[track_caller]
    pub fn try_rule(
        &mut self,
        ops: &[Op],
        f: impl Fn(&Arc<UOp>, &mut C) -> Result<Option<Arc<UOp>>, RuleError> + Send + Sync + 'static,
    ) -> &mut Self {
        let rule = Rule {
            order: self.len,
            location: Location::caller(),
            f: Arc::new(f),
        };
        if ops.is_empty() {
            self.wildcards.push(rule);
        } else {
            for op in ops {
                self.by_op[*op as usize].push(rule.clone());
            }
        }
        self.len += 1;
        self
    }

    /// Appends every rule of `other` after this matcher's rules.
    pub fn extend(&mut self, other: &PatternMatcher<C>) -> &mut Self {
        let base = self.len;
        for (op, rules) in other.by_op.iter().enumerate() {
            self.by_op[op].extend(rules.iter().map(|r| Rule {
                order: base + r.order,
                ..r.clone()
            }));
        }
        self.wildcards.extend(other.wildcards.iter().map(|r| Rule {
            order: base + r.order,
            ..r.clone()
        }));
        self.len += other.len;
        self
    }

    /// This matcher followed by `other`, under a new name.
    pub fn combined(&self, other: &PatternMatcher<C>, name: impl Into<String>) -> Self {
        let mut m = self.clone();
        m.name = name.into();
        m.extend(other);
        m
    }

    /// Tries the rules that can match `node`'s op, in registration order,
    /// then the wildcard rules; returns the first replacement. A rule that
    /// returns the node itself counts as no match; a rule that fails stops
    /// the search with an error naming the rule and the node.
    pub fn rewrite(&self, node: &Arc<UOp>, ctx: &mut C) -> Result<Option<Arc<UOp>>, RewriteError> {
        let specific = &self.by_op[node.op() as usize];
        let (mut i, mut j) = (0, 0);
        // Merge the two ordered lists so registration order is respected.
        while i < specific.len() || j < self.wildcards.len() {
            let take_specific = j >= self.wildcards.len()
                || (i < specific.len() && specific[i].order < self.wildcards[j].order);
            let rule = if take_specific {
                i += 1;
                &specific[i - 1]
            } else {
                j += 1;
                &self.wildcards[j - 1]
            };
            match (rule.f)(node, ctx) {
                Ok(Some(new)) if !Arc::ptr_eq(&new, node) => return Ok(Some(new)),
                Ok(_) => {}
                Err(e) => {
                    return Err(RewriteError::new(
                        self.name(),
                        node,
                        RewriteErrorKind::RuleFailed {
                            rule: rule.order,
                            location: rule.location.to_string(),
                            message: e.message,
                        },
                    ))
                }
            }
        }
        Ok(None)
    }
}

impl<C> PatternMatcher<C> {
    /// One single-rule matcher per rule, in registration order, named
    /// `"{name}#{i}"` after this matcher and the rule's position. Each keeps
    /// the ops its rule was registered for. Used to check rules one at a
    /// time (the symbolic verification proves every rule on its own).
    pub fn split(&self) -> Vec<PatternMatcher<C>> {
        (0..self.len)
            .map(|i| {
                let mut single = PatternMatcher::new(format!("{}#{i}", self.name));
                let only = |r: &Rule<C>| {
                    (r.order == i).then(|| Rule {
                        order: 0,
                        ..r.clone()
                    })
                };
                for (op, rules) in self.by_op.iter().enumerate() {
                    single.by_op[op].extend(rules.iter().filter_map(only));
                }
                single
                    .wildcards
                    .extend(self.wildcards.iter().filter_map(only));
                single.len = 1;
                single
            })
            .collect()
    }
}
