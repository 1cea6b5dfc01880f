//! The on-disk cache of beam search results, so a second process starts
//! with the tuned kernel at no search cost.
//!
//! An entry is the list of opts the search chose (replayed through
//! [`morok_core::apply_opts`], which re-checks every validity rule), in a file
//! named by the blake3 hash of: [`VERSION`], a structural dump of the
//! kernel AST (nodes in topological order with op, argument, dtype and
//! operand positions: no process-specific ids), the device's identity
//! (codegen, compiler, flags, CPU) and the search settings. Files are
//! written to a temporary name and renamed into place, so readers never
//! see a half-written entry; an entry that does not parse is ignored (and
//! overwritten by the next search).

use morok_core::uop::UOp;
use morok_core::{BeamConfig, Opt, OptArg, OptOps};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Version of the entry format and of what a cached opt list means; bump
/// it when opts or the search change meaning (2: the search's winner is
/// confirmed against the heuristics' kernel; entries of searches without
/// that check are searched again).
pub const VERSION: &str = "morok-beam 2";

/// A directory of beam search results.
#[derive(Clone, Debug)]
pub struct BeamCache {
    dir: PathBuf,
}

/// The opts' names in entry files.
const NAMES: [(OptOps, &str); 10] = [
    (OptOps::Tc, "TC"),
    (OptOps::Upcast, "UPCAST"),
    (OptOps::Unroll, "UNROLL"),
    (OptOps::Local, "LOCAL"),
    (OptOps::Group, "GROUP"),
    (OptOps::GroupTop, "GROUPTOP"),
    (OptOps::Thread, "THREAD"),
    (OptOps::NoLocals, "NOLOCALS"),
    (OptOps::PadTo, "PADTO"),
    (OptOps::Swap, "SWAP"),
];

/// A structural dump of `ast` that is equal for equal graphs in any
/// process.
fn structural_dump(ast: &Arc<UOp>) -> String {
    let nodes = ast.toposort();
    let pos: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let mut out = String::new();
    for n in &nodes {
        let _ = write!(out, "{:?}|{}|{}|", n.op(), n.arg(), n.dtype());
        for s in n.src() {
            let _ = write!(out, "{},", pos[&s.id()]);
        }
        out.push('\n');
    }
    out
}

/// One opt as a line of an entry: `NAME axis arg...` (`-` for no axis).
fn format_opt(opt: &Opt) -> String {
    let name = NAMES
        .iter()
        .find(|(o, _)| *o == opt.op)
        .map_or("?", |n| n.1);
    let axis = opt.axis.map_or("-".to_string(), |a| a.to_string());
    match opt.arg {
        OptArg::None => format!("{name} {axis}"),
        OptArg::Int(n) => format!("{name} {axis} {n}"),
        OptArg::Tc(a, b, c) => format!("{name} {axis} {a} {b} {c}"),
    }
}

/// Parses a line written by [`format_opt`].
fn parse_opt(line: &str) -> Option<Opt> {
    let mut parts = line.split_whitespace();
    let name = parts.next()?;
    let op = NAMES.iter().find(|(_, n)| *n == name)?.0;
    let axis = match parts.next()? {
        "-" => None,
        a => Some(a.parse().ok()?),
    };
    let nums: Vec<i64> = parts.map(str::parse).collect::<Result<_, _>>().ok()?;
    let arg = match nums[..] {
        [] => OptArg::None,
        [n] => OptArg::Int(n),
        [a, b, c] => OptArg::Tc(a, b, c),
        _ => return None,
    };
    Some(Opt { op, axis, arg })
}

impl BeamCache {
    /// The cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> BeamCache {
        BeamCache { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a search of `ast` on the device `identity` with
    /// `config` (its progress flag aside).
    pub fn key(ast: &Arc<UOp>, identity: &str, config: &BeamConfig) -> String {
        let mut h = blake3::Hasher::new();
        h.update(VERSION.as_bytes());
        h.update(&[0]);
        h.update(structural_dump(ast).as_bytes());
        h.update(&[0]);
        h.update(identity.as_bytes());
        h.update(&[0]);
        h.update(format!("{} {}", config.width, config.max_candidates).as_bytes());
        h.finalize().to_hex().to_string()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.opts"))
    }

    /// The opts stored under `key`, or `None` when there is no entry or
    /// it does not parse.
    pub fn load(&self, key: &str) -> Option<Vec<Opt>> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let mut lines = text.lines();
        if lines.next()? != VERSION {
            return None;
        }
        let mut opts = Vec::new();
        for line in lines {
            if line == "end" {
                return Some(opts);
            }
            opts.push(parse_opt(line)?);
        }
        // No end marker: a truncated entry.
        None
    }

    /// Stores `opts` under `key` (written to a temporary file, then
    /// renamed into place).
    pub fn store(&self, key: &str, opts: &[Opt]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut text = format!("{VERSION}\n");
        for o in opts {
            text.push_str(&format_opt(o));
            text.push('\n');
        }
        text.push_str("end\n");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = self
            .dir
            .join(format!(".{key}.{}.{nanos}.tmp", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, self.path(key)).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morok_core::sample_kernels::matmul;

    #[test]
    fn entries_round_trip_and_corrupt_ones_are_ignored() {
        let dir = std::env::temp_dir().join(format!("morok-beam-cache-{}", std::process::id()));
        let cache = BeamCache::new(&dir);
        let ast = matmul(8, 8, 8);
        let key = BeamCache::key(&ast, "dev", &BeamConfig::new(2));
        assert_eq!(
            key,
            BeamCache::key(&matmul(8, 8, 8), "dev", &BeamConfig::new(2))
        );
        assert_ne!(key, BeamCache::key(&ast, "other", &BeamConfig::new(2)));
        assert_ne!(
            key,
            BeamCache::key(&matmul(8, 8, 4), "dev", &BeamConfig::new(2))
        );
        assert_eq!(cache.load(&key), None);
        let opts = vec![
            Opt::new(OptOps::Upcast, 1, 4),
            Opt::new(OptOps::Swap, 0, 1),
            Opt::no_locals(),
        ];
        cache.store(&key, &opts).unwrap();
        assert_eq!(cache.load(&key), Some(opts.clone()));
        for bad in [
            "garbage",
            "morok-beam 2\nUPCAST 1 4\n",
            "morok-beam 2\nFOO 1\nend\n",
            "morok-beam 1\nUPCAST 1 4\nend\n",
        ] {
            std::fs::write(cache.path(&key), bad).unwrap();
            assert_eq!(cache.load(&key), None, "{bad:?}");
        }
        cache.store(&key, &opts).unwrap();
        assert_eq!(cache.load(&key), Some(opts));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
