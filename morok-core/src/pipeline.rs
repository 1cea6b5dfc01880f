//! The per-kernel pipeline: one kernel AST becomes a [`Program`] for one
//! target. [`compile_program`] is the whole path, top to bottom:
//!
//! 1. [`crate::opt::optimize`]: range rewrites chosen by heuristics or
//!    beam search ([`crate::opt::search`]);
//! 2. [`crate::lower::lower`]: validation, symbolic simplification,
//!    decompositions for the target's [`Caps`](crate::caps::Caps), bounds,
//!    reduces, index types, linearization;
//! 3. [`Renderer::render`]: the target's source code;
//! 4. the [`Program`]: code plus the facts lowering proved (buffer roles
//!    and access ranges, guarded accesses, the parallel loop, variables).
//!
//! Compiling the program into something runnable is the device's job
//! ([`crate::device::Device::compile`]); caching programs is the caller's.

use crate::device::Device;
use crate::kernel::loop_nest_iterations;
use crate::lower::{lower, LowerError, LowerOptions, LoweredKernel};
use crate::opt::{optimize, OptError, OptLimits, OptMode, OptTarget};
use crate::program::{kernel_name, parallel_var, variables, Launch, Program};
use crate::render::{RenderError, Renderer};
use crate::uop::UOp;
use std::sync::Arc;

/// Options of the per-kernel pipeline (part of every kernel cache key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// How the kernel is optimized; [`OptMode::None`] also skips the
    /// optional symbolic pass of lowering.
    pub mode: OptMode,
}

/// Why a kernel AST could not become a program.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The optimizer failed.
    #[error(transparent)]
    Opt(#[from] OptError),
    /// Lowering failed.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The renderer cannot express the linear program.
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// Runs the per-kernel pipeline (see the module docs) for `renderer`'s
/// target. `device`, when given, is where the program will run (beam
/// search times candidates on it).
pub fn compile_program(
    ast: &Arc<UOp>,
    renderer: &dyn Renderer,
    device: Option<&dyn Device>,
    opts: &CompileOptions,
) -> Result<Program, PipelineError> {
    let caps = renderer.caps();
    let optimized = optimize(
        ast,
        opts.mode,
        &OptTarget {
            caps,
            limits: limits_for(device).with_vector_bytes(caps.vector_bytes),
            device,
        },
    )?;
    lower_optimized(ast, &optimized, renderer, opts)
}

/// The optimizer's limits for a kernel that runs on `device`: the host
/// CPU's, with the threads capped at the device's
/// ([`Device::threads`], `MOROK_THREADS` on the CPU device). Without a
/// device, the host's cores.
fn limits_for(device: Option<&dyn Device>) -> OptLimits {
    let host = OptLimits::host_cpu();
    match device {
        Some(d) => host.with_threads(d.threads()),
        None => host,
    }
}

/// Steps 2–4 of [`compile_program`]: lowers `optimized` (the optimizer's
/// result for `original`) and renders it. Beam search builds its
/// candidates with it. Fused multiply-adds are formed only when the
/// optimizer changed the kernel.
pub fn lower_optimized(
    original: &Arc<UOp>,
    optimized: &Arc<UOp>,
    renderer: &dyn Renderer,
    opts: &CompileOptions,
) -> Result<Program, PipelineError> {
    let name = kernel_name(optimized);
    let mut lower_opts = LowerOptions::new(renderer.caps()).with_name(name);
    lower_opts.noopt = opts.mode == OptMode::None;
    lower_opts.fma = !Arc::ptr_eq(optimized, original);
    let lowered = lower(optimized, &lower_opts)?;
    Ok(render_program(optimized, lowered, renderer)?)
}

/// The last step of [`compile_program`]: renders a linear program lowered
/// from `ast` and gathers its launch facts into a [`Program`]. (Tests that
/// lower with other capabilities than the renderer's call it directly.)
pub fn render_program(
    ast: &Arc<UOp>,
    lowered: LoweredKernel,
    renderer: &dyn Renderer,
) -> Result<Program, RenderError> {
    let rendered = renderer.render(&lowered)?;
    let vars = variables(&lowered);
    let launch = Launch {
        parallel: lowered.parallel.as_ref().map(|p| p.size),
        global: [1, 1, 1],
        local: None,
        work: loop_nest_iterations(ast),
        parallel_var: parallel_var(&lowered, &vars),
    };
    Ok(Program {
        name: lowered.name.clone(),
        ast: ast.clone(),
        vars,
        lowered: Arc::new(lowered),
        source: rendered.source,
        entry: rendered.entry,
        launch,
    })
}
