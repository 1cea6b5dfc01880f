//! [`DeviceMeasure`]: beam search's [`Measure`] on a [`Device`].
//!
//! A candidate is lowered and rendered for the device's renderer
//! ([`lower_optimized`]) and compiled by the device within a time limit
//! ([`Device::compile_within`], [`BeamConfig::compile_limit`]: a compile
//! that runs longer is stopped and the candidate dropped); candidates of
//! one round build on every core (compiling is the expensive part). Timing
//! runs one candidate at a time on buffers of the kernel's sizes filled
//! with random values (floats in `[-1, 1)`, integers and bools 0, so
//! data-dependent indices stay in bounds); scalar variables take their
//! largest value. The buffers are allocated once per search and grown
//! when a candidate touches more.

use super::search::Measure;
use morok_core::device::{CompiledKernel, Device, DeviceBuffer};
use morok_core::dtype::{DType, ScalarType};
use morok_core::program::Program;
use morok_core::uop::UOp;
#[cfg(doc)]
use morok_core::BeamConfig;
use morok_core::{lower_optimized, CompileOptions};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Most operations a candidate's linear program may have (bigger ones
/// take long to compile and never win).
pub const MAX_OPS: usize = 4000;

/// Builds candidates with a device's renderer and compiler and times them
/// on it.
pub struct DeviceMeasure<'a> {
    device: &'a dyn Device,
    original: Arc<UOp>,
    options: CompileOptions,
    buffers: Mutex<Vec<Box<dyn DeviceBuffer>>>,
    /// Hashes of the code built so far (different opt lists can render
    /// the same code; it is timed once).
    sources: Mutex<HashSet<u64>>,
    /// Longest a candidate's compile may run ([`Device::compile_within`]).
    compile_limit: Duration,
}

/// A candidate ready to time.
pub struct BuiltCandidate {
    kernel: Arc<dyn CompiledKernel>,
    program: Program,
}

impl<'a> DeviceMeasure<'a> {
    /// Measures candidates optimized from `original` on `device`, lowered
    /// with `options` (the pipeline's).
    pub fn new(device: &'a dyn Device, original: &Arc<UOp>, options: CompileOptions) -> Self {
        DeviceMeasure {
            device,
            original: original.clone(),
            options,
            buffers: Mutex::new(Vec::new()),
            sources: Mutex::new(HashSet::new()),
            compile_limit: morok_core::COMPILE_LIMIT,
        }
    }

    /// These measurements with candidates' compiles stopped after `limit`
    /// (a candidate whose compile is stopped fails to build and is
    /// dropped from the search).
    pub fn with_compile_limit(mut self, limit: Duration) -> Self {
        self.compile_limit = limit;
        self
    }

    /// Makes sure a buffer of the right type and size exists for every
    /// slot of `program`.
    fn ensure_buffers(&self, program: &Program) -> Result<(), String> {
        let mut bufs = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        for (slot, b) in program.buffers().iter().enumerate() {
            let need = b.access.map_or(1, |(_, hi)| (hi + 1).max(1) as usize);
            let fits = bufs
                .get(slot)
                .is_some_and(|have| have.dtype() == b.dtype && have.len() >= need);
            if fits {
                continue;
            }
            let mut buf = self
                .device
                .allocate(b.dtype, need)
                .map_err(|e| e.to_string())?;
            buf.copy_in(&random_bytes(b.dtype, need, slot as u64))
                .map_err(|e| e.to_string())?;
            if slot < bufs.len() {
                bufs[slot] = buf;
            } else {
                bufs.push(buf);
            }
        }
        Ok(())
    }
}

/// `count` elements of `dtype` as bytes: floats uniform in `[-1, 1)` from
/// a fixed seed, everything else zero.
fn random_bytes(dtype: DType, count: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(count * dtype.itemsize());
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    for _ in 0..count {
        match dtype.scalar_type() {
            ScalarType::F32 => out.extend((next() as f32).to_le_bytes()),
            ScalarType::F64 => out.extend(next().to_le_bytes()),
            ScalarType::F16 => out.extend(half::f16::from_f64(next()).to_le_bytes()),
            ScalarType::BF16 => out.extend(half::bf16::from_f64(next()).to_le_bytes()),
            _ => out.resize(out.len() + dtype.itemsize(), 0),
        }
    }
    out
}

impl Measure for DeviceMeasure<'_> {
    type Built = BuiltCandidate;

    fn build(&self, optimized: &Arc<UOp>) -> Result<BuiltCandidate, String> {
        let program = lower_optimized(
            &self.original,
            optimized,
            self.device.renderer(),
            &self.options,
        )
        .map_err(|e| e.to_string())?;
        if program.lowered.ops.len() > MAX_OPS {
            return Err(format!(
                "{} operations (more than {MAX_OPS})",
                program.lowered.ops.len()
            ));
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        program.source.hash(&mut h);
        if !self
            .sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(h.finish())
        {
            return Err("the same code as an earlier candidate".into());
        }
        let kernel = self
            .device
            .compile_within(&program, self.compile_limit)
            .map_err(|e| e.to_string())?;
        Ok(BuiltCandidate { kernel, program })
    }

    /// Builds on as many threads as the host has cores, each taking the
    /// next candidate not yet taken.
    fn build_all(&self, candidates: &[Arc<UOp>]) -> Vec<Result<BuiltCandidate, String>> {
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(candidates.len());
        if workers <= 1 {
            return candidates.iter().map(|c| self.build(c)).collect();
        }
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<BuiltCandidate, String>>>> =
            Mutex::new((0..candidates.len()).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(c) = candidates.get(i) else { break };
                    let r = self.build(c);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err("the build thread panicked".into())))
            .collect()
    }

    fn time(&self, built: &BuiltCandidate, runs: usize) -> Result<Duration, String> {
        self.ensure_buffers(&built.program)?;
        let bufs = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let slots: Vec<&dyn DeviceBuffer> = bufs
            .iter()
            .take(built.program.buffers().len())
            .map(|b| b.as_ref())
            .collect();
        let vars: Vec<i64> = built.program.vars.iter().map(|v| v.max).collect();
        built
            .kernel
            .time(&slots, &vars, runs)
            .map_err(|e| e.to_string())
    }
}
