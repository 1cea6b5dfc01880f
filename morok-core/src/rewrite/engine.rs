//! `graph_rewrite`: applies a [`PatternMatcher`] to a whole graph until no
//! rule matches anywhere (a fixpoint).
//!
//! The traversal uses an explicit stack, so deep graphs cannot overflow
//! the call stack, and memoizes every node's final form within one call,
//! so shared subgraphs are rewritten once. Each node goes through:
//!
//! - stage 0: in [`Direction::TopDown`] the rules are tried on the node
//!   before its operands; a match replaces the node and the replacement is
//!   processed from stage 0. Otherwise (or in [`Direction::BottomUp`]) the
//!   operands are scheduled first;
//! - stage 1: the node is rebuilt from its rewritten operands and the
//!   rules are tried again; a match is processed from stage 0. (Top-down
//!   with a zero-sized context, a node whose operands came back
//!   unchanged is not tried again: the rules declined it in stage 0, and
//!   without context state they would decline it again.)
//! - stage 2: the node's result is the result of its replacement.
//!
//! A rule set that keeps producing new nodes is stopped after a budget of
//! rewrites and reported as a [`RewriteError`] naming the matcher and
//! printing the node it was working on; a rule that fails stops the
//! rewrite with a [`RewriteError`] naming the matcher, the rule and the
//! node.

use super::error::{RewriteError, RewriteErrorKind};
use super::PatternMatcher;
use crate::uop::{IdMap, UOp};
use std::sync::Arc;

/// Traversal order of [`graph_rewrite`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Try rules on a node before and after its operands are rewritten.
    TopDown,
    /// Try rules on a node only after its operands are rewritten.
    BottomUp,
}

/// Options for [`graph_rewrite_with`].
#[derive(Clone, Copy, Debug)]
pub struct RewriteOptions {
    /// Traversal order.
    pub direction: Direction,
    /// Maximum number of successful rule applications; `None` picks
    /// `100_000 + 64 × graph size`.
    pub max_rewrites: Option<usize>,
}

impl Default for RewriteOptions {
    fn default() -> Self {
        RewriteOptions {
            direction: Direction::TopDown,
            max_rewrites: None,
        }
    }
}

/// Rewrites `root` with `pm` to a fixpoint, top-down (see module docs).
pub fn graph_rewrite<C>(
    pm: &PatternMatcher<C>,
    root: &Arc<UOp>,
    ctx: &mut C,
) -> Result<Arc<UOp>, RewriteError> {
    graph_rewrite_with(pm, root, ctx, RewriteOptions::default())
}

/// Rewrites `root` with `pm` to a fixpoint, bottom-up (see module docs).
pub fn graph_rewrite_bottom_up<C>(
    pm: &PatternMatcher<C>,
    root: &Arc<UOp>,
    ctx: &mut C,
) -> Result<Arc<UOp>, RewriteError> {
    let opts = RewriteOptions {
        direction: Direction::BottomUp,
        max_rewrites: None,
    };
    graph_rewrite_with(pm, root, ctx, opts)
}

enum Stage {
    /// Visit: maybe rewrite before operands, then schedule operands.
    Enter,
    /// Operands done: rebuild and try the rules again.
    Rebuild,
    /// The node was replaced by the attached node: copy its result.
    Link,
}

/// Rewrites `root` with explicit options.
pub fn graph_rewrite_with<C>(
    pm: &PatternMatcher<C>,
    root: &Arc<UOp>,
    ctx: &mut C,
    opts: RewriteOptions,
) -> Result<Arc<UOp>, RewriteError> {
    // The default budget needs the graph's size; it is counted only once
    // the rewrite count passes the fixed part, which few rewrites do.
    const FIXED_BUDGET: usize = 100_000;
    let mut sized_budget: Option<usize> = None;
    let mut over_budget = |rewrites: usize| match opts.max_rewrites {
        Some(b) => rewrites > b,
        None if rewrites <= FIXED_BUDGET => false,
        None => {
            rewrites > *sized_budget.get_or_insert_with(|| FIXED_BUDGET + 64 * root.node_count())
        }
    };
    let stateless = std::mem::size_of::<C>() == 0;
    let mut rewrites = 0usize;
    let mut done: IdMap<Arc<UOp>> = IdMap::default();
    let mut stack: Vec<(Arc<UOp>, Stage, Arc<UOp>)> =
        vec![(root.clone(), Stage::Enter, root.clone())];

    let mut replaced = |node: &Arc<UOp>, new: Arc<UOp>, stack: &mut Vec<_>| {
        rewrites += 1;
        if over_budget(rewrites) {
            return Err(RewriteError::new(
                pm.name(),
                node,
                RewriteErrorKind::Diverged {
                    rewrites: rewrites - 1,
                },
            ));
        }
        stack.push((node.clone(), Stage::Link, new.clone()));
        stack.push((new.clone(), Stage::Enter, new));
        Ok(())
    };

    while let Some((node, stage, cur)) = stack.pop() {
        if done.contains_key(&node.id()) {
            continue;
        }
        match stage {
            Stage::Enter => {
                if opts.direction == Direction::TopDown {
                    if let Some(new) = pm.rewrite(&cur, ctx)? {
                        replaced(&node, new, &mut stack)?;
                        continue;
                    }
                }
                stack.push((node, Stage::Rebuild, cur.clone()));
                for s in cur.src().iter().rev() {
                    if !done.contains_key(&s.id()) {
                        stack.push((s.clone(), Stage::Enter, s.clone()));
                    }
                }
            }
            Stage::Rebuild => {
                // Operands are processed before this entry pops (LIFO); one
                // can only be missing if a rule re-created an ancestor, in
                // which case it is processed first.
                if let Some(missing) = cur.src().iter().find(|s| !done.contains_key(&s.id())) {
                    let missing = missing.clone();
                    stack.push((node, Stage::Rebuild, cur));
                    stack.push((missing.clone(), Stage::Enter, missing));
                    continue;
                }
                let src = cur.src().iter().map(|s| done[&s.id()].clone()).collect();
                let rebuilt = cur.with_sources(src);
                let unchanged = Arc::ptr_eq(&rebuilt, &cur);
                if !unchanged && opts.direction == Direction::TopDown {
                    replaced(&node, rebuilt, &mut stack)?;
                    continue;
                }
                // Top-down, the rules already declined this very node at
                // `Enter`; with a zero-sized context a rule cannot carry
                // state from the operands' rewrites, so it would decline
                // again, and asking twice is skipped.
                let declined = unchanged && opts.direction == Direction::TopDown && stateless;
                let new = if declined {
                    None
                } else {
                    pm.rewrite(&rebuilt, ctx)?
                };
                match new {
                    Some(new) => replaced(&node, new, &mut stack)?,
                    None => {
                        // A fixpoint maps to itself, so revisiting it is free.
                        done.insert(rebuilt.id(), rebuilt.clone());
                        done.insert(node.id(), rebuilt);
                    }
                }
            }
            Stage::Link => {
                let result = done[&cur.id()].clone();
                done.insert(node.id(), result);
            }
        }
    }
    Ok(done[&root.id()].clone())
}
