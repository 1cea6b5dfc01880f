//! The tree dump of a graph: `[id] OP(arg) : dtype`, one node a line, with
//! box-drawing branches. A node reached a second time is printed as
//! `[id] → (same as above)` and not expanded again.

use super::{Arg, UOp};
use std::collections::HashSet;
use std::fmt::Write;
use std::sync::Arc;

impl UOp {
    /// Renders the graph rooted here as a tree (see the module docs).
    pub fn tree(self: &Arc<Self>) -> String {
        let mut out = String::new();
        let mut seen = HashSet::new();
        // Explicit stack of (node, prefix for the line, prefix for children).
        let mut stack: Vec<(Arc<UOp>, String, String)> =
            vec![(self.clone(), String::new(), String::new())];
        while let Some((node, line_prefix, child_prefix)) = stack.pop() {
            if !seen.insert(node.id()) {
                let _ = writeln!(out, "{line_prefix}[{}] → (same as above)", node.id());
                continue;
            }
            let _ = write!(
                out,
                "{line_prefix}[{}] {}",
                node.id(),
                node.op().dump_name()
            );
            if *node.arg() != Arg::None {
                let _ = write!(out, "({})", node.arg());
            }
            let _ = writeln!(out, " : {}", node.dtype());
            let n = node.src().len();
            for (i, s) in node.src().iter().enumerate().rev() {
                let last = i + 1 == n;
                let (branch, cont) = if last {
                    ("└── ", "    ")
                } else {
                    ("├── ", "│   ")
                };
                stack.push((
                    s.clone(),
                    format!("{child_prefix}{branch}"),
                    format!("{child_prefix}{cont}"),
                ));
            }
        }
        out
    }
}
