//! The per-kernel pipeline: one kernel AST becomes a [`Program`] for one
//! target. [`compile_program`] is the whole path, top to bottom:
//!
//! 1. [`crate::opt::optimize`]: range rewrites chosen by the heuristics
//!    for the [`Target`] (a beam search, run by a driver outside core,
//!    passes its own opts to [`compile_with_opts`]);
//! 2. [`crate::lower::lower`]: validation, symbolic simplification,
//!    decompositions for the target's [`Caps`](crate::caps::Caps), bounds,
//!    reduces, index types, linearization;
//! 3. [`Renderer::render`]: the target's source code;
//! 4. the [`Program`]: code plus the facts lowering proved (buffer roles
//!    and access ranges, guarded accesses, the parallel loop, variables).
//!
//! Compiling the program into something runnable is the device's job
//! ([`crate::device::Device::compile`]); caching programs is the caller's.

use crate::kernel::loop_nest_iterations;
use crate::lower::{lower, LowerError, LowerOptions, LoweredKernel};
use crate::opt::{apply_opts, optimize, random_opts, Opt, OptError, OptMode};
use crate::profile::{timed, Stage};
use crate::program::{kernel_name, parallel_var, variables, Launch, Program};
use crate::render::{RenderError, Renderer};
use crate::target::Target;
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
/// language on the machine `target` describes: the heuristics' opts
/// ([`OptMode::Heuristics`]; `OptMode::Beam` too: the search is a driver
/// outside core that calls [`compile_with_opts`] with the opts it found),
/// a seeded random walk's ([`OptMode::Random`]) or none
/// ([`OptMode::None`]), then lowering and rendering.
pub fn compile_program(
    ast: &Arc<UOp>,
    renderer: &dyn Renderer,
    target: &Target,
    opts: &CompileOptions,
) -> Result<Program, PipelineError> {
    let chosen = timed(Stage::Optimize, || match opts.mode {
        OptMode::None => Vec::new(),
        OptMode::Heuristics | OptMode::Beam(_) => optimize(ast, target),
        OptMode::Random(seed) => random_opts(ast, target, seed),
    });
    compile_with_opts(ast, &chosen, renderer, target, opts)
}

/// The per-kernel pipeline with the opts given: `opts` applied to `ast`
/// for `target` ([`apply_opts`], every validity rule checked), then steps
/// 2–4.
pub fn compile_with_opts(
    ast: &Arc<UOp>,
    opts: &[Opt],
    renderer: &dyn Renderer,
    target: &Target,
    options: &CompileOptions,
) -> Result<Program, PipelineError> {
    let optimized = timed(Stage::Optimize, || apply_opts(ast, opts, target))?;
    lower_optimized(ast, &optimized, renderer, options)
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
    let lowered = timed(Stage::Lower, || lower(optimized, &lower_opts))?;
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
    let rendered = timed(Stage::Render, || renderer.render(&lowered))?;
    let vars = variables(&lowered);
    let launch = Launch {
        parallel: lowered.parallel.as_ref().map(|p| p.size),
        global: lowered.gpu.map_or([1, 1, 1], |g| g.grid),
        local: lowered.gpu.map(|g| g.block),
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
