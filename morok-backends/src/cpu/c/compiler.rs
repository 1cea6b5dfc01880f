//! The system C compiler and the on-disk cache of compiled kernels.
//!
//! # Flags
//!
//! `-pipe -O3 -march=native -fPIC -shared -std=c11 -fno-math-errno
//! -ffp-contract=off`, chosen deliberately:
//!
//! - `-pipe`: the compiler's stages hand their output through pipes, not
//!   temporary files: W1's kernel compiles in 53–55 ms instead of 59 ms
//!   (20 compiles each, a 2-core Zen 3); compiling is a first call's
//!   largest stage (`morok-bench --first-call-profile`), and the object
//!   is the same.
//! - `-O3`: GCC's `-O2` only vectorizes loops whose trip count needs no
//!   epilogue ("very cheap" cost model); `-O3` vectorizes generally.
//! - `-march=native`: use the host's vector width (kernels are compiled
//!   where they run; the cache key includes the host's architecture and
//!   CPU feature flags, so a cache directory shared between machines never
//!   hands one an object using instructions it lacks).
//! - `-fno-math-errno`: `sqrt` and friends may become single instructions
//!   and vectorize; only `errno`, which nothing reads, changes.
//! - `-ffp-contract=off`: no fusing of `a * b + c` into an FMA, so each
//!   float operation rounds exactly once, as the IR and the f64 reference
//!   evaluator assume (explicit `MULACC` still renders as `fma`).
//! - no `-ffast-math`: it would break NaN handling (`x != x`, NaN-propagating
//!   max) and reassociate reductions.
//!
//! Where `MOROK_CPU_VECTOR_BYTES` caps the vector width below the host's
//! ([`crate::host::host_vector_bytes`]), [`width_flags`] adds
//! `-mno-avx512f` (32 bytes) or `-mno-avx` (16) on x86-64, so the compiler
//! too stays within the width the kernels were rendered for.
//!
//! `MOROK_SANITIZE=1` adds [`sanitize_flags`] (AddressSanitizer and
//! UndefinedBehaviorSanitizer); the process must have the ASan runtime
//! preloaded, which the C device checks before its first build.
//!
//! # Cache layout
//!
//! `<dir>/<key>.so` is the object and `<dir>/<key>.so.blake3` its blake3
//! checksum (hex), where `key = blake3(source, compiler identity (path and
//! `--version` output), flags, host architecture and CPU flags)`. Both files are written
//! to a temporary file in `<dir>` and renamed into place (atomic), the
//! object first, so a reader never sees a partial object with a valid
//! checksum. An entry whose checksum does not match, or that fails to
//! load, is rebuilt. A fresh build is loaded from its own temporary file
//! before it is renamed into place, so builds of the same kernel racing in
//! several threads or processes each get their object (the entry the
//! last of them leaves may pair one build's object with another's
//! checksum, which the next load rebuilds). `<dir>` is created readable
//! only by the user (0700): loading an object runs its code.
//!
//! A directory that cannot be used (read-only, full, not a directory, a
//! corrupt entry that cannot be replaced) never fails the user's
//! computation: objects are then built in a private temporary directory,
//! and one warning per process says so.

use morok_core::device::{DeviceError, DeviceResult};
use morok_core::profile::Stage;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The compiler flags (see the module docs for the reasons).
pub const FLAGS: &[&str] = &[
    "-pipe",
    "-O3",
    "-march=native",
    "-fPIC",
    "-shared",
    "-std=c11",
    "-fno-math-errno",
    "-ffp-contract=off",
];

/// The flag that keeps the compiler within the rendered vector width on
/// x86-64 ([`crate::host::capped_x86_extension`]): none at the
/// host's own width, `-mno-avx512f` at 32 bytes on an AVX-512 host,
/// `-mno-avx` (which also turns off AVX2, FMA and AVX-512) at 16 bytes.
pub fn width_flags() -> &'static [&'static str] {
    match crate::host::capped_x86_extension() {
        Some("avx512f") => &["-mno-avx512f"],
        Some(_) => &["-mno-avx"],
        None => &[],
    }
}

/// The sanitizer flags of `MOROK_SANITIZE=1`
/// ([`crate::host::sanitize_requested`]): AddressSanitizer and
/// UndefinedBehaviorSanitizer (with float-to-integer overflow, which GCC's
/// `undefined` group leaves out), aborting on the first report (no recovery),
/// with frame pointers and line tables so a report names the kernel's
/// line. None otherwise.
pub fn sanitize_flags() -> &'static [&'static str] {
    if crate::host::sanitize_requested() {
        &[
            "-fsanitize=address,undefined,float-cast-overflow",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
            "-g",
        ]
    } else {
        &[]
    }
}

/// The checksum stored beside each cached object (`<key>.so.blake3`,
/// `<key>.o.blake3`): blake3 of its bytes, in hex.
pub fn checksum_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A C compiler found on the system.
#[derive(Clone, Debug)]
pub struct Compiler {
    path: PathBuf,
    identity: String,
}

/// Finds `name` in `PATH` (or takes it as a path if it contains a slash).
fn which(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

impl Compiler {
    /// The compiler `explicit` names, or the first of `cc`, `clang`, `gcc`
    /// on `PATH`. Its identity is its path plus its `--version` output.
    pub fn find(explicit: Option<&str>) -> DeviceResult<Compiler> {
        let candidates: Vec<&str> = match explicit {
            Some(c) => vec![c],
            None => vec!["cc", "clang", "gcc"],
        };
        let path = candidates.iter().find_map(|c| which(c)).ok_or_else(|| {
            DeviceError::NoCompiler(format!("none of {candidates:?} found on PATH"))
        })?;
        let out = Command::new(&path)
            .arg("--version")
            .output()
            .map_err(|e| DeviceError::NoCompiler(format!("{}: {e}", path.display())))?;
        if !out.status.success() {
            return Err(DeviceError::NoCompiler(format!(
                "{} --version failed",
                path.display()
            )));
        }
        let identity = format!(
            "{}\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stdout)
        );
        Ok(Compiler { path, identity })
    }

    /// The compiler's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Compiled objects on disk, built on demand.
pub struct ObjectCache {
    dir: PathBuf,
    compiler: Compiler,
    invocations: AtomicUsize,
    /// Where objects are built when `dir` cannot be written (read-only,
    /// full, not a directory): a private temporary directory that lives
    /// as long as the cache, made on first need.
    fallback: OnceLock<Result<tempfile::TempDir, String>>,
}

/// Says once per process that a cache directory cannot be used and
/// kernels are compiled without it: the user's computation goes on.
pub(crate) fn warn_cache_unusable(dir: &Path, error: &DeviceError) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "morok: warning: the kernel cache {} cannot be used ({error}); \
             kernels are compiled without it in this process",
            dir.display()
        );
    }
}

pub(crate) fn io(what: String) -> impl FnOnce(std::io::Error) -> DeviceError {
    move |source| DeviceError::Io { what, source }
}

/// Creates `dir` (and parents) readable only by the user.
pub(crate) fn create_private_dir(dir: &Path) -> DeviceResult<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .map_err(io(format!("creating cache directory {}", dir.display())))
}

impl ObjectCache {
    /// A cache in `dir` (created on first build) using `compiler`.
    pub fn new(dir: PathBuf, compiler: Compiler) -> ObjectCache {
        ObjectCache {
            dir,
            compiler,
            invocations: AtomicUsize::new(0),
            fallback: OnceLock::new(),
        }
    }

    /// How many times the compiler ran.
    pub fn invocations(&self) -> usize {
        self.invocations.load(Ordering::Relaxed)
    }

    /// The compiler's file name and the first line of its `--version`
    /// output (`cc: gcc (Debian 12.2.0-14) 12.2.0`).
    pub fn compiler_version(&self) -> String {
        let name = self
            .compiler
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let version = self.compiler.identity.lines().nth(1).unwrap_or("");
        format!("{name}: {version}")
    }

    /// What identifies the objects this cache builds, apart from their
    /// source: compiler identity, flags, host architecture and CPU flags.
    pub fn identity(&self) -> String {
        format!(
            "{}\0{} {} {}\0{}\0{}",
            self.compiler.identity,
            FLAGS.join(" "),
            width_flags().join(" "),
            sanitize_flags().join(" "),
            std::env::consts::ARCH,
            crate::host::cpu_flags()
        )
    }

    /// The cache key of a source.
    pub fn key(&self, source: &str) -> String {
        let mut h = blake3::Hasher::new();
        h.update(source.as_bytes());
        h.update(&[0]);
        h.update(self.identity().as_bytes());
        h.finalize().to_hex().to_string()
    }

    /// The object for `source`, from the cache if a valid entry exists,
    /// otherwise compiled and stored. Returns the loaded library.
    /// With `limit`, a compiler still running after it is killed and the
    /// build fails (beam search's per-candidate timeout).
    pub fn load_or_build(
        &self,
        source: &str,
        kernel: &str,
        limit: Option<Duration>,
    ) -> DeviceResult<libloading::Library> {
        let key = self.key(source);
        let obj = self.dir.join(format!("{key}.so"));
        let sum = self.dir.join(format!("{key}.so.blake3"));
        if let Some(lib) = self.load_checked(&obj, &sum) {
            return Ok(lib);
        }
        match self.build(&self.dir, source, kernel, &obj, &sum, limit) {
            Err(e @ DeviceError::Io { .. }) => {
                // The directory cannot be written: build in a private
                // temporary one instead, and say so once.
                warn_cache_unusable(&self.dir, &e);
                let dir = self
                    .fallback
                    .get_or_init(|| {
                        tempfile::Builder::new()
                            .prefix("morok-kernels-")
                            .tempdir()
                            .map_err(|e| e.to_string())
                    })
                    .as_ref()
                    .map_err(|reason| DeviceError::NoCompiler(format!(
                        "no writable directory for kernel objects: {} ({e}), the temporary directory ({reason})",
                        self.dir.display()
                    )))?
                    .path();
                let obj = dir.join(format!("{key}.so"));
                let sum = dir.join(format!("{key}.so.blake3"));
                self.build(dir, source, kernel, &obj, &sum, limit)
            }
            built => built,
        }
    }

    /// Loads `obj` if its checksum matches `sum` and it opens.
    fn load_checked(&self, obj: &Path, sum: &Path) -> Option<libloading::Library> {
        let bytes = std::fs::read(obj).ok()?;
        let expected = std::fs::read_to_string(sum).ok()?;
        if checksum_hex(&bytes) != expected.trim() {
            return None;
        }
        // SAFETY: the object was produced by our compiler invocation from a
        // kernel we rendered (its checksum matches what we wrote), and its
        // only initialisation code is the C runtime's.
        morok_core::profile::timed(Stage::Load, || unsafe { libloading::Library::new(obj) }).ok()
    }

    /// Compiles `source` into a private temporary object, loads that file
    /// (so a concurrent build of the same source, in this or another
    /// process, cannot swap it underneath), then stores it as the cache
    /// entry. Racing builds may leave an object and a checksum from
    /// different builds; the next load detects that and rebuilds.
    fn build(
        &self,
        dir: &Path,
        source: &str,
        kernel: &str,
        obj: &Path,
        sum: &Path,
        limit: Option<Duration>,
    ) -> DeviceResult<libloading::Library> {
        let (out, tmp) = morok_core::profile::timed(Stage::Compile, || -> DeviceResult<_> {
            create_private_dir(dir)?;
            let tmp = |suffix: &str| {
                tempfile::Builder::new()
                    .prefix(".build-")
                    .suffix(suffix)
                    .tempfile_in(dir)
                    .map_err(io(format!(
                        "creating a temporary file in {}",
                        dir.display()
                    )))
            };
            let mut src = tmp(".c")?;
            src.write_all(source.as_bytes())
                .map_err(io(format!("writing {}", src.path().display())))?;
            let out = tmp(".so")?;
            self.invocations.fetch_add(1, Ordering::Relaxed);
            let err = tmp(".err")?;
            let stderr = err
                .reopen()
                .map_err(io(format!("opening {}", err.path().display())))?;
            let mut child = Command::new(&self.compiler.path)
                .args(FLAGS)
                .args(width_flags())
                .args(sanitize_flags())
                .arg("-x")
                .arg("c")
                .arg(src.path())
                .arg("-o")
                .arg(out.path())
                .arg("-lm")
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .map_err(|e| {
                    DeviceError::NoCompiler(format!("{}: {e}", self.compiler.path.display()))
                })?;
            let failed = |stderr: String| DeviceError::Compile {
                kernel: kernel.to_string(),
                compiler: self.compiler.path.display().to_string(),
                stderr,
            };
            let waited = |e: std::io::Error| failed(format!("waiting for the compiler: {e}"));
            let status = match limit {
                None => child.wait().map_err(waited)?,
                Some(limit) => {
                    let start = Instant::now();
                    loop {
                        if let Some(status) = child.try_wait().map_err(waited)? {
                            break status;
                        }
                        if start.elapsed() >= limit {
                            // Killing an already finished child is harmless.
                            let _ = child.kill();
                            let _ = child.wait();
                            return Err(failed(format!(
                                "stopped after {limit:?} (the compile time limit)"
                            )));
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
            };
            if !status.success() {
                return Err(failed(
                    std::fs::read_to_string(err.path()).unwrap_or_default(),
                ));
            }
            Ok((out, tmp))
        })?;
        let bytes =
            std::fs::read(out.path()).map_err(io(format!("reading {}", out.path().display())))?;
        // SAFETY: the object was just produced by our compiler invocation
        // from a kernel we rendered, in a file only this call knows; its
        // only initialisation code is the C runtime's.
        let lib = morok_core::profile::timed(Stage::Load, || unsafe {
            libloading::Library::new(out.path())
        })
        .map_err(|e| DeviceError::Load {
            kernel: kernel.to_string(),
            path: out.path().display().to_string(),
            reason: e.to_string(),
        })?;
        // The mapping stays valid when the file is renamed into place, or
        // removed if storing fails (a full disk): the kernel runs anyway.
        let stored = out
            .persist(obj)
            .map_err(|e| io(format!("storing {}", obj.display()))(e.error))
            .and_then(|_| {
                let mut s = tmp(".blake3")?;
                s.write_all(checksum_hex(&bytes).as_bytes())
                    .map_err(io(format!("writing {}", s.path().display())))?;
                s.persist(sum)
                    .map_err(|e| io(format!("storing {}", sum.display()))(e.error))
                    .map(|_| ())
            });
        if let Err(e) = stored {
            warn_cache_unusable(dir, &e);
        }
        Ok(lib)
    }
}
