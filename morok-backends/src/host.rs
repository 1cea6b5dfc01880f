//! The host machine, probed once per process: CPU features (CPUID), cache
//! sizes (Linux `sysfs`), the CPU's name and flags (`/proc/cpuinfo`), its
//! cores, and the settings that cap them (`MOROK_CPU_VECTOR_BYTES`). Every
//! host fact the compiler uses is read here, by one reader each; the
//! CPU devices turn them into the optimizer's [`Target`] ([`cpu_target`])
//! and the renderers' capabilities.

use morok_core::target::Target;
use std::path::Path;
use std::sync::OnceLock;

/// The optimizer's description of the host CPU: its vector width
/// ([`host_vector_bytes`]), L2 cache ([`l2_bytes`]) and cores
/// ([`available_threads`]).
pub fn cpu_target() -> Target {
    Target::cpu(host_vector_bytes(), l2_bytes(), available_threads())
}

/// The cores this process may run on (1 where unknown).
pub fn available_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Bytes of one core's level-`level` data (or unified) cache as Linux
/// reports it (`/sys/devices/system/cpu/cpu0/cache/index*/`); `None`
/// where it is not reported.
pub fn cache_bytes(level: u8) -> Option<usize> {
    let dir = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    (0..8)
        .map(|i| dir.join(format!("index{i}")))
        .filter(|d| {
            read(d.join("level")).trim() == level.to_string()
                && read(d.join("type")).trim() != "Instruction"
        })
        .find_map(|d| parse_cache_size(read(d.join("size")).trim()))
        .filter(|&b| b > 0)
}

/// The host's per-core L2 cache in bytes ([`cache_bytes`], read once); 0
/// where it is not reported.
pub fn l2_bytes() -> usize {
    static L2: OnceLock<usize> = OnceLock::new();
    *L2.get_or_init(|| cache_bytes(2).unwrap_or(0))
}

/// The host's last-level (L3) cache in bytes ([`cache_bytes`], read
/// once); `None` where it is not reported.
pub fn l3_bytes() -> Option<usize> {
    static L3: OnceLock<Option<usize>> = OnceLock::new();
    *L3.get_or_init(|| cache_bytes(3))
}

/// `"1024K"`, `"2M"` or `"512"` as bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    match unit {
        "" => Some(n),
        "K" => Some(n << 10),
        "M" => Some(n << 20),
        _ => None,
    }
}

/// The first `/proc/cpuinfo` line (Linux) whose key is one of `keys`, as
/// its value after the colon; `None` where there is none.
fn cpuinfo_value(keys: &[&str]) -> Option<String> {
    static INFO: OnceLock<String> = OnceLock::new();
    let info = INFO.get_or_init(|| std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default());
    info.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        keys.contains(&key.trim()).then(|| value.trim().to_string())
    })
}

/// The host CPU's feature flags (what `-march=native` compiles for), from
/// `/proc/cpuinfo` where it exists; empty elsewhere.
pub fn cpu_flags() -> String {
    cpuinfo_value(&["flags", "Features"]).unwrap_or_default()
}

/// The CPU's model name from `/proc/cpuinfo` (Linux), else the
/// architecture's name.
pub fn cpu_model() -> String {
    cpuinfo_value(&["model name"]).unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Whether the host CPU has a fused multiply-add instruction, detected
/// when the program runs: FMA3 on x86-64, always on aarch64. The CPU
/// renderers list `MULACC` as native only then, so a host without it gets
/// a plain multiply and add instead of a slow libm `fma` call. On x86-64,
/// a [`host_vector_bytes`] capped to 16 (`MOROK_CPU_VECTOR_BYTES=16`)
/// turns AVX off, and FMA3 with it.
pub fn host_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        host_vector_bytes() >= 32 && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The vector width in bytes the CPU devices compile for: the host CPU's
/// widest vector registers, detected when the program runs (never assumed
/// from the build target), or less where `MOROK_CPU_VECTOR_BYTES` caps it
/// (see [`capped_vector_bytes`]). Detected: 64 with AVX-512F, 32 with
/// AVX2 and FMA, 16 otherwise (SSE2 on x86-64, NEON on aarch64, and the
/// conservative default elsewhere). The C and LLVM devices turn the
/// instruction-set extensions above this width off, so a cap makes an
/// AVX-512 machine generate and run the code of an AVX2 or SSE machine.
pub fn host_vector_bytes() -> u16 {
    static WIDTH: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *WIDTH.get_or_init(|| {
        let cap = crate::settings::env_setting("MOROK_CPU_VECTOR_BYTES", "16, 32 or 64", |v| {
            matches!(v, "16" | "32" | "64").then(|| v.to_string())
        });
        capped_vector_bytes(detected_vector_bytes(), cap.as_deref())
    })
}

/// The widest vector registers the host CPU has, in bytes (see
/// [`host_vector_bytes`]).
pub fn detected_vector_bytes() -> u16 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 64;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return 32;
        }
    }
    16
}

/// The x86-64 instruction-set extension a capped [`host_vector_bytes`]
/// turns off, by its name in both GCC's `-mno-NAME` and LLVM's `-NAME`
/// feature syntax: `avx512f` at 32 bytes on an AVX-512 host (its subsets
/// go with it), `avx` at 16 bytes (AVX2, FMA and AVX-512 go with it);
/// none at the host's own width and off x86-64.
pub fn capped_x86_extension() -> Option<&'static str> {
    if !cfg!(target_arch = "x86_64") || host_vector_bytes() >= detected_vector_bytes() {
        return None;
    }
    Some(if host_vector_bytes() == 32 {
        "avx512f"
    } else {
        "avx"
    })
}

/// The vector width for a host whose registers have `detected` bytes
/// under the setting `cap` (`MOROK_CPU_VECTOR_BYTES`): `16`, `32` or `64`
/// lowers the width to at most that; a cap above the host's width, an
/// unset variable and any other value leave `detected` (a machine cannot
/// run instructions it lacks; [`host_vector_bytes`] warns about a value
/// that is not a width, like every `MOROK_` setting: [`crate::settings`]).
pub fn capped_vector_bytes(detected: u16, cap: Option<&str>) -> u16 {
    match cap.map(str::trim).and_then(|c| c.parse::<u16>().ok()) {
        Some(c @ (16 | 32 | 64)) => detected.min(c),
        _ => detected,
    }
}

/// True when `MOROK_SANITIZE` asks for sanitized kernels (an on value of
/// [`crate::settings::env_flag`], e.g. `1`): the C device then builds every kernel with AddressSanitizer
/// and UndefinedBehaviorSanitizer, so an out-of-bounds access or undefined
/// arithmetic in generated code aborts with a report. Read once.
pub fn sanitize_requested() -> bool {
    static SANITIZE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SANITIZE.get_or_init(|| crate::settings::env_flag("MOROK_SANITIZE"))
}

/// True when the AddressSanitizer runtime is mapped into this process.
/// Sanitized kernels are shared objects loaded late, and the runtime must
/// come first (`LD_PRELOAD=$(cc -print-file-name=libasan.so)`), so the C
/// device checks this before it builds one.
pub fn asan_runtime_loaded() -> bool {
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|maps| {
        maps.lines().any(|l| {
            l.rsplit('/')
                .next()
                .is_some_and(|f| f.starts_with("libasan"))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::{capped_vector_bytes, parse_cache_size};

    #[test]
    fn a_cap_only_lowers_the_detected_width() {
        assert_eq!(capped_vector_bytes(64, Some("32")), 32);
        assert_eq!(capped_vector_bytes(64, Some(" 16 ")), 16);
        assert_eq!(capped_vector_bytes(32, Some("64")), 32);
        assert_eq!(capped_vector_bytes(64, None), 64);
        assert_eq!(capped_vector_bytes(64, Some("24")), 64);
        assert_eq!(capped_vector_bytes(64, Some("avx2")), 64);
        assert_eq!(capped_vector_bytes(16, Some("32")), 16);
    }

    #[test]
    fn cache_sizes_parse_with_their_units() {
        assert_eq!(parse_cache_size("1024K"), Some(1 << 20));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("1G"), None);
        assert_eq!(parse_cache_size(""), None);
    }
}
