//! The machine's own limits: streaming bandwidth (read, copy, triad) and
//! the FMA peak, measured by two small C programs compiled with the system
//! C compiler at run time (`MOROK_CC`, else `cc`) with `-O3 -march=native`,
//! running one thread per core.
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
    /// One read and one write stream.
    pub copy_gbs: f64,
    /// Two read streams and one write stream (`a = b + s * c`).
    pub triad_gbs: f64,
    /// Peak float32 FMA throughput.
    pub fma_gflops: f64,
    /// Vector width the FMA kernel used, in bits.
    pub vector_bits: u32,
}

/// Streams over three arrays with one pthread per core; each thread
/// touches its own slice first so pages land near it. Best of `reps`.
const STREAM_C: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long n; static int nt, reps;
static float *a, *b, *c;
static double best[3] = {1e30, 1e30, 1e30};
static pthread_barrier_t bar;
static volatile float sink;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *worker(void *p) {
  long id = (long)p, lo = n * id / nt, hi = n * (id + 1) / nt;
  lo -= lo % 16; hi = id == nt - 1 ? n : hi - hi % 16;
  for (long i = lo; i < hi; i++) { a[i] = 1.0f; b[i] = 2.0f; c[i] = 0.5f; }
  for (int r = 0; r < reps; r++) {
    for (int op = 0; op < 3; op++) {
      pthread_barrier_wait(&bar);
      double t0 = now();
      if (op == 0) {
        float acc[16] = {0};
        for (long i = lo; i < hi; i += 16)
          for (int j = 0; j < 16; j++) acc[j] += a[i + j];
        float s = 0; for (int j = 0; j < 16; j++) s += acc[j];
        sink = s;
      } else if (op == 1) {
        for (long i = lo; i < hi; i++) c[i] = a[i];
      } else {
        for (long i = lo; i < hi; i++) a[i] = b[i] + 1.5f * c[i];
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
  n -= n % (16L * nt);
  a = aligned_alloc(64, n * 4); b = aligned_alloc(64, n * 4); c = aligned_alloc(64, n * 4);
  if (!a || !b || !c) return 1;
  pthread_barrier_init(&bar, 0, nt);
  pthread_t th[256];
  for (long i = 0; i < nt; i++) pthread_create(&th[i], 0, worker, (void *)i);
  for (long i = 0; i < nt; i++) pthread_join(th[i], 0);
  printf("read %f\ncopy %f\ntriad %f\n", 4.0 * n / best[0] / 1e9, 8.0 * n / best[1] / 1e9, 12.0 * n / best[2] / 1e9);
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
        copy_gbs: field(&stream, "copy")?,
        triad_gbs: field(&stream, "triad")?,
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
}
