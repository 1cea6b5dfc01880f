//! The per-kernel pipeline on a device: core's pipeline
//! (`morok-core/src/pipeline.rs`) for the device's renderer and [`Target`],
//! with the opts the mode asks for. The one place that runs a beam search
//! ([`crate::beam`]), since timing candidates needs the device.

use morok_core::device::Device;
use morok_core::program::Program;
#[cfg(doc)]
use morok_core::target::Target;
use morok_core::uop::UOp;
use morok_core::OptMode;
use morok_core::{compile_with_opts, CompileOptions, PipelineError};
use std::sync::Arc;

/// One kernel AST as a [`Program`] for `device`: under `OptMode::Beam`
/// the opts of a beam search ([`crate::beam::beam_opts`]), else core's
/// [`morok_core::compile_program`] (heuristics, a random walk's opts, or
/// none).
pub fn compile_program(
    ast: &Arc<UOp>,
    device: &dyn Device,
    options: &CompileOptions,
) -> Result<Program, PipelineError> {
    let target = device.target();
    match options.mode {
        OptMode::Beam(config) => {
            let opts = morok_core::profile::timed(morok_core::profile::Stage::Optimize, || {
                crate::beam::beam_opts(ast, &config, device)
            });
            compile_with_opts(ast, &opts, device.renderer(), &target, options)
        }
        OptMode::None | OptMode::Heuristics | OptMode::Random(_) => {
            morok_core::compile_program(ast, device.renderer(), &target, options)
        }
    }
}
