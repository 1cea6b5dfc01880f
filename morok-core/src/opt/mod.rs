//! The kernel optimizer: a pure function of a kernel AST and a
//! [`Target`] that chooses range rewrites (upcast, unroll, threads, ...)
//! before lowering. The per-kernel pipeline
//! ([`crate::pipeline::compile_program`]) applies its choice.
//!
//! - [`opts`]: the [`Opt`] model and the checks opts share;
//! - [`actions`]: each opt's validity rules and what it does
//!   ([`apply_opt`]), with [`partials`] (the `PARTIALS` opt) and
//!   `tensor_core` (`TC`: matmul reduces as tensor-core instructions);
//! - [`kernel`]: the kernel's ranges as opts address them, and the range
//!   split (`shift_to`) every opt is built from;
//! - [`heuristic`]: the opts chosen by hand-written rules, with
//!   [`reduce_strategy`] (how reductions use the cores), [`threads`] (the
//!   `THREAD` axis, at most [`Target::threads`]), [`compile_cost`] (the cap
//!   on unrolls under upcast lanes) and [`access`] (strides of the
//!   kernel's buffer accesses);
//! - [`candidates`]: the search space of a beam search (every action, the
//!   kernels one action away); the search itself builds and times
//!   candidates on a device, so it is a driver outside core
//!   (`morok_backends::beam`);
//! - [`mode`]: [`OptMode`] and [`BeamConfig`].
//!
//! [`optimize`] returns the heuristics' opts; [`apply_opts`] applies a
//! list (deterministic, every validity rule re-checked).

pub mod access;
pub mod actions;
pub mod candidates;
pub mod compile_cost;
pub mod gpu_heuristic;
pub mod heuristic;
pub mod kernel;
pub mod mode;
pub mod opts;
pub mod partials;
pub mod reduce_strategy;
mod tensor_core;
pub mod threads;

pub use actions::apply_opt;
pub use kernel::OptKernel;
pub use mode::{BeamConfig, OptMode, COMPILE_LIMIT};
pub use opts::{Opt, OptArg, OptOps};

use crate::target::Target;
use crate::uop::UOp;
use std::sync::Arc;

/// Why a kernel could not be optimized.
#[derive(Debug, thiserror::Error)]
#[error("optimizing kernel `{kernel}` failed: {what}")]
pub struct OptError {
    /// The kernel's name.
    pub kernel: String,
    /// What went wrong.
    pub what: String,
}

impl OptError {
    fn new(ast: &Arc<UOp>, what: String) -> OptError {
        OptError {
            kernel: crate::program::kernel_name(ast),
            what,
        }
    }
}

/// Applies `opts` in order to the kernel `ast` for `target`; the first
/// refused opt fails the whole list (its error names the opt, its position
/// and the reason). Deterministic: the same AST, list and target give the
/// same result.
pub fn apply_opts(ast: &Arc<UOp>, opts: &[Opt], target: &Target) -> Result<Arc<UOp>, OptError> {
    let mut k = OptKernel::new(ast, *target);
    for (i, opt) in opts.iter().enumerate() {
        apply_opt(&mut k, opt).map_err(|e| OptError::new(ast, format!("opt {i} {opt}: {e}")))?;
        k.applied.push(*opt);
    }
    Ok(k.ast)
}

/// The opts the hand-written heuristics choose for `ast` on `target`
/// ([`apply_heuristics`]): a pure function of the two.
/// [`apply_opts`] with them gives the optimized kernel.
pub fn optimize(ast: &Arc<UOp>, target: &Target) -> Vec<Opt> {
    let mut k = OptKernel::new(ast, *target);
    apply_heuristics(&mut k);
    k.applied
}

/// The opts of a seeded random walk through the beam search's space
/// ([`OptMode::Random`], for fuzzing): from the unoptimized kernel or the
/// heuristics' choice (the seed decides), up to four steps, each to a
/// random one of the kernel's [`candidates::neighbours`]. Every list is
/// valid for `target` ([`apply_opts`] accepts it); a pure function of the
/// kernel's name, the target and `seed`, so a run is reproducible.
pub fn random_opts(ast: &Arc<UOp>, target: &Target, seed: u64) -> Vec<Opt> {
    let name = crate::program::kernel_name(ast);
    let key = name.bytes().fold(seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut counter = 0;
    let mut draw = |n: usize| {
        counter += 1;
        (crate::random::threefry2x32(counter, key) % n as u64) as usize
    };
    let mut k = OptKernel::new(ast, *target);
    if draw(2) == 0 {
        apply_heuristics(&mut k);
    }
    let actions = candidates::search_actions();
    for _ in 0..draw(5) {
        let mut next = candidates::neighbours(&k, &actions);
        if next.is_empty() {
            break;
        }
        let pick = draw(next.len());
        k = next.swap_remove(pick);
    }
    k.applied
}

/// The heuristics for `k`'s target: [`gpu_heuristic::gpu_optimizations`]
/// on a GPU (`Target::gpu`), else [`heuristic::hand_coded_optimizations`].
pub fn apply_heuristics(k: &mut OptKernel) {
    if k.target.gpu.is_some() {
        gpu_heuristic::gpu_optimizations(k);
    } else {
        heuristic::hand_coded_optimizations(k);
    }
}

#[cfg(test)]
pub(crate) mod tests;
