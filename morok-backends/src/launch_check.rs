//! The checks every device runs before it launches a compiled kernel:
//! the variables against their bounds, and the buffers against the
//! kernel's slots (count, element type, device, the access ranges
//! lowering proved, no written buffer in two slots). A launch that fails
//! one is an error, never an out-of-bounds access.
//!
//! For a kernel with variables the access ranges depend on their values:
//! lowering stored them as expressions of the variables
//! (`Program::access_at` evaluates them), cached here by value.

use morok_core::device::{DeviceBuffer, DeviceError, DeviceResult};
use morok_core::program::{Program, VarSlot};
use morok_core::BufferSlot;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An inclusive element range a kernel may touch in one buffer (`None`:
/// none).
pub type Access = Option<(i64, i64)>;

/// Access ranges of a kernel with variables, by the variables' values.
type AccessCache = HashMap<Vec<i64>, Arc<[Access]>>;

/// Value sets whose access ranges a kernel keeps; past this the cache
/// starts over (bounded memory for kernels launched with many values).
const ACCESS_CACHE_LIMIT: usize = 1024;

/// What a compiled kernel checks its launches against.
pub struct LaunchChecks {
    name: String,
    /// The kernel's buffer slots, in `DEFINE_GLOBAL` order.
    pub buffers: Vec<BufferSlot>,
    vars: Vec<VarSlot>,
    /// For a kernel with variables: its program and the access ranges by
    /// the variables' values.
    var_access: Option<(Program, Mutex<AccessCache>)>,
}

impl LaunchChecks {
    /// The checks of `program`'s launches.
    pub fn new(program: &Program) -> LaunchChecks {
        LaunchChecks {
            name: program.name.clone(),
            buffers: program.buffers().to_vec(),
            vars: program.vars.clone(),
            var_access: (!program.vars.is_empty()).then(|| (program.clone(), Mutex::default())),
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// An error about a launch of this kernel.
    pub fn bad(&self, reason: String) -> DeviceError {
        DeviceError::BadArgs {
            what: format!("kernel `{}`", self.name),
            reason,
        }
    }

    /// Checks `vars` against the kernel's variables and their bounds.
    pub fn check_vars(&self, vars: &[i64]) -> DeviceResult<()> {
        if vars.len() != self.vars.len() {
            return Err(self.bad(format!(
                "{} variable values given, the kernel takes {}",
                vars.len(),
                self.vars.len()
            )));
        }
        for (v, slot) in vars.iter().zip(&self.vars) {
            if *v < slot.min || *v > slot.max {
                return Err(self.bad(format!(
                    "variable {} = {v} is outside {}..={}",
                    slot.name, slot.min, slot.max
                )));
            }
        }
        Ok(())
    }

    /// The access ranges for a launch with `vars`: `None` for a kernel
    /// without variables (its slots' static ranges hold), else the ranges
    /// at these values (cached).
    pub fn access(&self, vars: &[i64]) -> Option<Arc<[Access]>> {
        let (program, cache) = self.var_access.as_ref()?;
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = cache.get(vars) {
            return Some(a.clone());
        }
        let ranges: Arc<[Access]> = program.access_at(vars).into();
        if cache.len() >= ACCESS_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(vars.to_vec(), ranges.clone());
        Some(ranges)
    }

    /// Checks `buffers` against the slots, with the access ranges
    /// `access` where given (else the slots' static ones), and returns
    /// them as the device's buffer type `B` (`device` names it in the
    /// error for a buffer of another device).
    pub fn check<'a, B: 'static>(
        &self,
        buffers: &[&'a dyn DeviceBuffer],
        access: Option<&[Access]>,
        device: &str,
    ) -> DeviceResult<Vec<&'a B>> {
        if buffers.len() != self.buffers.len() {
            return Err(self.bad(format!(
                "{} buffers given, the kernel takes {}",
                buffers.len(),
                self.buffers.len()
            )));
        }
        let mut out = Vec::with_capacity(buffers.len());
        for (i, (b, slot)) in buffers.iter().zip(&self.buffers).enumerate() {
            let typed = b
                .as_any()
                .downcast_ref::<B>()
                .ok_or_else(|| self.bad(format!("buffer {i} is not a {device} buffer")))?;
            if b.dtype() != slot.dtype {
                return Err(self.bad(format!(
                    "buffer {i} holds {}, the kernel expects {}",
                    b.dtype(),
                    slot.dtype
                )));
            }
            let range = match access {
                None => slot.access,
                Some(a) => match a.get(i) {
                    Some(r) => *r,
                    None => return Err(self.bad(format!("no access range for buffer {i}"))),
                },
            };
            if let Some((lo, hi)) = range {
                if lo < 0 || hi as u64 >= b.len() as u64 {
                    return Err(self.bad(format!(
                        "buffer {i} has {} elements, the kernel may access elements {lo}..={hi}",
                        b.len()
                    )));
                }
            }
            out.push(typed);
        }
        for (i, slot) in self.buffers.iter().enumerate() {
            let aliased = out
                .iter()
                .enumerate()
                .any(|(j, b)| j != i && std::ptr::eq(*b, out[i]));
            if slot.written && aliased {
                return Err(self.bad(format!(
                    "buffer {i} is written and also passed in another slot"
                )));
            }
        }
        Ok(out)
    }
}
