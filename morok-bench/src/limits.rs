//! The machine's own limits: streaming bandwidth (read, copy, triad) and
//! the FMA peak, measured by two small C programs compiled with the system
//! C compiler at run time (`MOROK_CC`, else `cc`) with `-O3 -march=native`,
//! running one thread per core, each written for the best the machine
//! does (see `STREAM_C` and `FMA_C` below). Under `MOROK_CPU_VECTOR_BYTES`
//! they keep to the capped width as the kernels do (`-mno-avx512f`), so
//! the FMA peak is that of the code Morok runs.
//!
//! Bytes are counted as the workloads count them: every array element read
//! or written once (write-allocate traffic is not counted). FLOPs count an
//! FMA as two.

use std::path::Path;
use std::process::Command;

/// What the machine reaches, in GB/s and GFLOP/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Threads the measurements ran on.
    pub threads: usize,
    /// Sum of one stream (read only).
    pub read_gbs: f64,
    /// One read and one write stream: the better of ordinary and
    /// non-temporal stores.
    pub copy_gbs: f64,
    /// Two read streams and one write stream (`a = b + s * c`): the better
    /// of ordinary and non-temporal stores.
    pub triad_gbs: f64,
    /// Copy with ordinary stores (each written line is read first).
    pub copy_cached_gbs: f64,
    /// Triad with ordinary stores.
    pub triad_cached_gbs: f64,
    /// Peak float32 FMA throughput.
    pub fma_gflops: f64,
    /// Vector width the FMA kernel used, in bits.
    pub vector_bits: u32,
}

impl Limits {
    /// Each figure the better of `self` and `other` (two measurements of
    /// one machine: its limit is what it reached).
    pub fn best(&self, other: &Limits) -> Limits {
        Limits {
            threads: self.threads,
            read_gbs: self.read_gbs.max(other.read_gbs),
            copy_gbs: self.copy_gbs.max(other.copy_gbs),
            triad_gbs: self.triad_gbs.max(other.triad_gbs),
            copy_cached_gbs: self.copy_cached_gbs.max(other.copy_cached_gbs),
            triad_cached_gbs: self.triad_cached_gbs.max(other.triad_cached_gbs),
            fma_gflops: self.fma_gflops.max(other.fma_gflops),
            vector_bits: self.vector_bits,
        }
    }
}

/// Streams over three arrays with one pthread per core; each thread
/// touches its own slice first so pages land near it. Best of `reps`.
///
/// Written for the best the machine does, as a tuned library would: the
/// arrays are 2 MiB aligned anonymous mappings advised as huge pages on
/// Linux (as NumPy's large arrays are, and Morok's uploaded inputs;
/// the prefetchers stop at page boundaries, so 4 KiB pages cost a read
/// stream about a third of its rate), the read sums into four independent
/// vector accumulators, and copy and triad run twice, with ordinary stores
/// and with non-temporal (streaming) stores, which skip the
/// read-for-ownership of every written line: each figure is the better of
/// the two, and both are printed.
const STREAM_C: &str = r#"
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#define LANES 16
#define STREAM(p, v) _mm512_stream_ps((p), (__m512)(v))
#elif defined(__AVX__)
#include <immintrin.h>
#define LANES 8
#define STREAM(p, v) _mm256_stream_ps((p), (__m256)(v))
#else
#define LANES 4
#define STREAM(p, v) (*(vf *)(p) = (v))
#endif
typedef float vf __attribute__((vector_size(LANES * 4)));
#define BLOCK (4 * LANES)
enum { READ, COPY, COPY_NT, TRIAD, TRIAD_NT, OPS };
static long n; static int nt, reps;
static float *a, *b, *c;
static double best[OPS] = {1e30, 1e30, 1e30, 1e30, 1e30};
static pthread_barrier_t bar;
static volatile float sink;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static float *array(long bytes) {
#ifdef __linux__
  long huge = 2L << 20;
  char *raw = mmap(0, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return 0;
  float *p = (float *)(((unsigned long)raw + huge - 1) & ~(huge - 1));
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
#else
  return aligned_alloc(64, bytes);
#endif
}
static void *worker(void *p) {
  long id = (long)p, lo = n * id / nt, hi = n * (id + 1) / nt;
  lo -= lo % BLOCK; hi -= hi % BLOCK;
  for (long i = lo; i < hi; i++) { a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.5f; }
  vf k = {0}; k += 1.5f;
  for (int r = 0; r < reps; r++) {
    for (int op = 0; op < OPS; op++) {
      pthread_barrier_wait(&bar);
      double t0 = now();
      if (op == READ) {
        vf s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
        for (long i = lo; i < hi; i += BLOCK) {
          s0 += *(vf *)(a + i); s1 += *(vf *)(a + i + LANES);
          s2 += *(vf *)(a + i + 2 * LANES); s3 += *(vf *)(a + i + 3 * LANES);
        }
        vf s = (s0 + s1) + (s2 + s3);
        sink = s[0] + s[LANES - 1];
      } else if (op == COPY) {
        for (long i = lo; i < hi; i += LANES) *(vf *)(c + i) = *(vf *)(a + i);
      } else if (op == COPY_NT) {
        for (long i = lo; i < hi; i += LANES) STREAM(c + i, *(vf *)(a + i));
      } else if (op == TRIAD) {
        for (long i = lo; i < hi; i += LANES) *(vf *)(a + i) = *(vf *)(b + i) + k * *(vf *)(c + i);
      } else {
        for (long i = lo; i < hi; i += LANES) STREAM(a + i, *(vf *)(b + i) + k * *(vf *)(c + i));
      }
      pthread_barrier_wait(&bar);
      double t = now() - t0;
      if (id == 0 && t < best[op]) best[op] = t;
    }
  }
  return 0;
}
int main(int argc, char **argv) {
  n = atol(argv[1]); nt = atoi(argv[2]); reps = atoi(argv[3]);
  n -= n % ((long)BLOCK * nt);
  a = array(n * 4); b = array(n * 4); c = array(n * 4);
  if (!a || !b || !c) return 1;
  pthread_barrier_init(&bar, 0, nt);
  pthread_t th[256];
  for (long i = 0; i < nt; i++) pthread_create(&th[i], 0, worker, (void *)i);
  for (long i = 0; i < nt; i++) pthread_join(th[i], 0);
  double g = n / 1e9;
  printf("read %f\ncopy_cached %f\ncopy_streaming %f\ntriad_cached %f\ntriad_streaming %f\n",
         4 * g / best[READ], 8 * g / best[COPY], 8 * g / best[COPY_NT], 12 * g / best[TRIAD], 12 * g / best[TRIAD_NT]);
  return 0;
}
"#;

/// Twelve independent multiply-add chains per thread on the widest vector
/// type the target has (GCC/Clang vector extensions, contracted to FMA
/// instructions), one pthread per core. Best of three.
const FMA_C: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__AVX512F__)
#define LANES 16
#else
#define LANES 8
#endif
typedef float vf __attribute__((vector_size(LANES * 4)));
static long iters; static volatile float sink;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *worker(void *p) {
  (void)p;
  vf m, d, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11;
  for (int l = 0; l < LANES; l++) {
    m[l] = 0.9999999f; d[l] = 1e-7f;
    x0[l] = x1[l] = x2[l] = x3[l] = x4[l] = x5[l] = l;
    x6[l] = x7[l] = x8[l] = x9[l] = x10[l] = x11[l] = -l;
  }
  for (long i = 0; i < iters; i++) {
    x0 = x0 * m + d; x1 = x1 * m + d; x2 = x2 * m + d; x3 = x3 * m + d;
    x4 = x4 * m + d; x5 = x5 * m + d; x6 = x6 * m + d; x7 = x7 * m + d;
    x8 = x8 * m + d; x9 = x9 * m + d; x10 = x10 * m + d; x11 = x11 * m + d;
  }
  vf s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;
  sink = s[0] + s[LANES - 1];
  return 0;
}
int main(int argc, char **argv) {
  iters = atol(argv[1]); int nt = atoi(argv[2]);
  double best = 1e30;
  pthread_t th[256];
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    for (long i = 0; i < nt; i++) pthread_create(&th[i], 0, worker, 0);
    for (long i = 0; i < nt; i++) pthread_join(th[i], 0);
    double t = now() - t0;
    if (t < best) best = t;
  }
  printf("fma %f\nbits %d\n", 2.0 * 12 * LANES * (double)iters * nt / best / 1e9, LANES * 32);
  return 0;
}
"#;

/// Compiles and runs both programs; `quick` uses small arrays and few
/// iterations (seconds → milliseconds, the figures are then meaningless).
pub fn measure(quick: bool) -> Result<Limits, String> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(256);
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let (elems, reps, iters) = if quick {
        (1 << 16, 2, 10_000)
    } else {
        (64 << 20, 8, 100_000_000)
    };
    let stream = run_c(dir.path(), "stream", STREAM_C, &[elems, threads, reps])?;
    let fma = run_c(dir.path(), "fma", FMA_C, &[iters, threads])?;
    Ok(Limits {
        threads,
        read_gbs: field(&stream, "read")?,
        copy_gbs: field(&stream, "copy_cached")?.max(field(&stream, "copy_streaming")?),
        triad_gbs: field(&stream, "triad_cached")?.max(field(&stream, "triad_streaming")?),
        copy_cached_gbs: field(&stream, "copy_cached")?,
        triad_cached_gbs: field(&stream, "triad_cached")?,
        fma_gflops: field(&fma, "fma")?,
        vector_bits: field(&fma, "bits")? as u32,
    })
}

/// Writes `source`, compiles it and returns what the program prints.
fn run_c(dir: &Path, name: &str, source: &str, args: &[usize]) -> Result<String, String> {
    let cc = std::env::var("MOROK_CC").unwrap_or_else(|_| "cc".to_string());
    let src = dir.join(format!("{name}.c"));
    let bin = dir.join(name);
    std::fs::write(&src, source).map_err(|e| format!("writing {}: {e}", src.display()))?;
    let out = Command::new(&cc)
        .args(["-O3", "-march=native", "-ffp-contract=fast", "-pthread"])
        .args(morok::backends::host::capped_x86_extension().map(|e| format!("-mno-{e}")))
        .arg(&src)
        .arg("-o")
        .arg(&bin)
        .output()
        .map_err(|e| format!("running `{cc}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{cc}` failed on the {name} kernel: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = Command::new(&bin)
        .args(args.iter().map(|a| a.to_string()))
        .output()
        .map_err(|e| format!("running {name}: {e}"))?;
    if !run.status.success() {
        return Err(format!("{name} exited with {}", run.status));
    }
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

/// The number after `key` on its own line of `text`.
fn field(text: &str, key: &str) -> Result<f64, String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
        .ok_or_else(|| format!("no `{key}` figure in {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_reads_the_keyed_line() {
        let t = "read 31.5\ncopy 20\n";
        assert_eq!(field(t, "copy"), Ok(20.0));
        assert!(field(t, "triad").is_err());
    }

    #[test]
    fn best_takes_each_figure_from_the_better_measurement() {
        let a = Limits {
            threads: 2,
            read_gbs: 42.0,
            copy_gbs: 90.0,
            triad_gbs: 55.0,
            copy_cached_gbs: 60.0,
            triad_cached_gbs: 40.0,
            fma_gflops: 510.0,
            vector_bits: 512,
        };
        let b = Limits {
            read_gbs: 75.0,
            copy_gbs: 50.0,
            fma_gflops: 520.0,
            ..a
        };
        let best = a.best(&b);
        assert_eq!(best.read_gbs, 75.0);
        assert_eq!(best.copy_gbs, 90.0);
        assert_eq!(best.triad_gbs, 55.0);
        assert_eq!(best.fma_gflops, 520.0);
        assert_eq!(best.vector_bits, 512);
    }
}
