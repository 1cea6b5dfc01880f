//! The layering of `morok-core`'s source, checked on the source text:
//!
//! - **no module cycles**: the graph whose nodes are the crate's source
//!   files and whose edges are the paths a file names (`use crate::..`,
//!   `super::..`, inline `crate::a::b::f(..)`), each resolved to the file
//!   that declares the module it reaches (through `pub use` re-exports of a
//!   `mod.rs` or `lib.rs`), has no cycle; and neither has the coarser graph
//!   of the top-level modules (`opt`, `lower`, `schedule`, ...);
//! - **a curated surface**: `lib.rs` makes only the interface modules
//!   public ([`PUBLIC_MODULES`]); the stages are private and other crates
//!   use them through `lib.rs`'s re-exports;
//! - **no I/O**: no file outside `config.rs` names `std::fs`,
//!   `std::process` or `std::env` (core computes; the backends and the
//!   facade probe the host and touch files).
//!
//! Test code (`tests.rs` files, `#[cfg(test)]` items) is left out: tests
//! may use any layer. `docs/ARCHITECTURE.md` ("Layers") says how to read a
//! failure.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The crate's `src/` directory.
fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A source file as a module: its path from `src/` and its module path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ModFile {
    rel: String,
    module: Vec<String>,
}

/// Every non-test source file of the crate (iterative directory walk).
fn source_files() -> Vec<ModFile> {
    let root = src_dir();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel.ends_with("tests.rs") {
                continue;
            }
            let mut module: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            out.push(ModFile { rel, module });
        }
    }
    out.sort();
    out
}

/// Whether an item carries `#[cfg(test)]` (or `#[cfg(any(test, ..))]`).
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = a
                .meta
                .require_list()
                .map(|l| l.tokens.to_string())
                .unwrap_or_default();
            text == "test" || text.starts_with("any (test")
        }
    })
}

/// The paths a file names, as written (`crate`/`super`/`self` prefixed
/// ones only), and its `pub use` re-exports (name → path).
#[derive(Default)]
struct Names {
    paths: Vec<Vec<String>>,
    reexports: HashMap<String, Vec<String>>,
}

impl Names {
    /// The leaves of a `use` tree, as full paths (`{a, b::c}` expanded,
    /// `*` and `self` leaves kept as the module path).
    fn use_tree(&mut self, prefix: &[String], tree: &syn::UseTree, public: bool) {
        let mut stack = vec![(prefix.to_vec(), tree)];
        while let Some((pre, t)) = stack.pop() {
            match t {
                syn::UseTree::Path(p) => {
                    let mut next = pre.clone();
                    next.push(p.ident.to_string());
                    stack.push((next, &p.tree));
                }
                syn::UseTree::Name(n) => {
                    let mut full = pre.clone();
                    if n.ident != "self" {
                        full.push(n.ident.to_string());
                    }
                    if public {
                        self.reexports
                            .insert(full.last().cloned().unwrap_or_default(), full.clone());
                    }
                    self.paths.push(full);
                }
                syn::UseTree::Rename(r) => {
                    let mut full = pre.clone();
                    full.push(r.ident.to_string());
                    if public {
                        self.reexports.insert(r.rename.to_string(), full.clone());
                    }
                    self.paths.push(full);
                }
                syn::UseTree::Glob(_) => self.paths.push(pre.clone()),
                syn::UseTree::Group(g) => stack.extend(g.items.iter().map(|i| (pre.clone(), i))),
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => &[],
        };
        if is_test_only(attrs) {
            return;
        }
        if let syn::Item::Use(u) = item {
            let public = matches!(u.vis, syn::Visibility::Public(_));
            self.use_tree(&[], &u.tree, public);
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            self.paths.push(segs);
        }
        syn::visit::visit_path(self, path);
    }
}

/// The crate's files, parsed: module path → (file, names).
struct Crate {
    files: BTreeMap<Vec<String>, (String, Names)>,
}

impl Crate {
    fn load() -> Crate {
        let mut files = BTreeMap::new();
        for f in source_files() {
            let text = std::fs::read_to_string(src_dir().join(&f.rel)).expect("read source");
            let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.rel));
            let mut names = Names::default();
            names.visit_file(&ast);
            files.insert(f.module.clone(), (f.rel, names));
        }
        Crate { files }
    }

    /// The absolute module path of `path` as written in module `at`.
    fn absolute(&self, at: &[String], path: &[String]) -> Vec<String> {
        let mut base: Vec<String> = at.to_vec();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            // A bare path starts at a child module of `at` (or is not ours).
            Some(first) => {
                let mut child = base.clone();
                child.push(first.to_string());
                if !self.files.contains_key(&child) {
                    return Vec::new();
                }
            }
            None => return Vec::new(),
        }
        base.extend(rest.iter().cloned());
        base
    }

    /// The file a path (absolute) lands in: the deepest module file on
    /// it, then through that file's `pub use` of the next name (a few
    /// hops at most).
    fn target(&self, mut path: Vec<String>) -> Option<String> {
        for _ in 0..8 {
            let mut depth = 0;
            while depth < path.len() && self.files.contains_key(&path[..=depth]) {
                depth += 1;
            }
            let module = path[..depth].to_vec();
            let (rel, names) = self.files.get(&module)?;
            match path.get(depth).and_then(|n| names.reexports.get(n)) {
                Some(re) => {
                    let mut next = self.absolute(&module, re);
                    if next.is_empty() {
                        return Some(rel.clone());
                    }
                    next.extend(path[depth + 1..].iter().cloned());
                    path = next;
                }
                None => return Some(rel.clone()),
            }
        }
        None
    }

    /// File → files it names (edges), without self-edges.
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (module, (rel, names)) in &self.files {
            let out = edges.entry(rel.clone()).or_default();
            for p in &names.paths {
                let abs = self.absolute(module, p);
                if let Some(t) = self.target(abs) {
                    if &t != rel && !t.starts_with("lib.rs") {
                        out.insert(t);
                    }
                }
            }
        }
        edges
    }
}

/// The strongly connected components with more than one node (Tarjan's
/// algorithm, iterative).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = edges.keys().collect();
    let index_of: HashMap<&String, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    comp.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    out.push(comp);
                }
            }
        }
    }
    out
}

/// Each cycle with the edges that close it, for the failure message.
fn describe(comps: &[Vec<String>], edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut s = String::new();
    for c in comps {
        s.push_str(&format!("cycle of {} nodes:\n", c.len()));
        for a in c {
            for b in edges[a].iter().filter(|b| c.contains(b)) {
                s.push_str(&format!("  {a} -> {b}\n"));
            }
        }
    }
    s
}

/// The top-level module a file belongs to (`opt/heuristic.rs` → `opt`).
fn top_level(rel: &str) -> String {
    rel.split('/')
        .next()
        .unwrap_or(rel)
        .trim_end_matches(".rs")
        .to_string()
}

#[test]
fn source_files_form_no_cycle() {
    let edges = Crate::load().edges();
    let comps = cycles(&edges);
    assert!(
        comps.is_empty(),
        "module cycles in morok-core/src:\n{}",
        describe(&comps, &edges)
    );
}

#[test]
fn top_level_modules_form_no_cycle() {
    let files = Crate::load().edges();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, outs) in &files {
        let from = top_level(a);
        let entry = edges.entry(from.clone()).or_default();
        entry.extend(outs.iter().map(|b| top_level(b)).filter(|b| *b != from));
    }
    for outs in edges.clone().values() {
        for b in outs {
            edges.entry(b.clone()).or_default();
        }
    }
    let comps = cycles(&edges);
    assert!(
        comps.is_empty(),
        "cycles between morok-core's top-level modules:\n{}",
        describe(&comps, &edges)
    );
}

#[test]
fn the_checker_sees_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    edges.entry("c".into()).or_default().insert("a".into());
    edges.entry("d".into()).or_default().insert("a".into());
    assert_eq!(
        cycles(&edges),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
}

/// The host-facing parts of `std` core must not name: files, processes,
/// the environment, and CPU feature detection.
const IO_PATHS: [&[&str]; 4] = [
    &["std", "fs"],
    &["std", "process"],
    &["std", "env"],
    &["std", "arch", "is_x86_feature_detected"],
];

#[test]
fn core_does_no_io() {
    let krate = Crate::load();
    let mut found = Vec::new();
    for (rel, names) in krate.files.values() {
        if rel == "config.rs" {
            continue;
        }
        for p in &names.paths {
            if let Some(io) = IO_PATHS
                .iter()
                .find(|io| p.len() >= io.len() && p.iter().zip(io.iter()).all(|(a, b)| a == b))
            {
                found.push(format!("{rel}: {}", io.join("::")));
            }
        }
    }
    found.dedup();
    assert!(
        found.is_empty(),
        "I/O in morok-core (move it to morok-backends or the facade):\n{}",
        found.join("\n")
    );
}

/// The modules `lib.rs` makes public: the interfaces (IR, types, shapes,
/// the rewrite engine, what backends implement and receive, the test
/// oracles, the stage timers tools read). Stages stay private and are reached through `lib.rs`'s
/// re-exports, so a new `pub mod` here is a decision to review.
const PUBLIC_MODULES: &[&str] = &[
    "caps",
    "device",
    "dtype",
    "gradient",
    "interp",
    "profile",
    "program",
    "reference",
    "render",
    "rewrite",
    "sample_kernels",
    "shape",
    "target",
    "tensor_ops",
    "uop",
];

#[test]
fn lib_exports_the_interfaces_and_keeps_the_stages_private() {
    let text = std::fs::read_to_string(src_dir().join("lib.rs")).expect("read lib.rs");
    let ast = syn::parse_file(&text).expect("parse lib.rs");
    let public: Vec<String> = ast
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if matches!(m.vis, syn::Visibility::Public(_)) => {
                Some(m.ident.to_string())
            }
            _ => None,
        })
        .collect();
    let unexpected: Vec<&String> = public
        .iter()
        .filter(|m| !PUBLIC_MODULES.contains(&m.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "lib.rs makes {unexpected:?} public; stages are private modules reached through \
         re-exports (see docs/ARCHITECTURE.md, \"Layers\")"
    );
}
