//! Lowering: a kernel AST (see `docs/ARCHITECTURE.md`, "Levels of the
//! graph", level 2) becomes a linear program a renderer can print.
//!
//! The stages, in order, one file each:
//!
//! 1. [`validate`]: the AST follows the contract (checked once, so later
//!    stages can rely on it);
//! 2. [`gpu_dims`] (GPU targets only, [`Caps::launch`](crate::caps::Caps)):
//!    the parallel output ranges become block and thread indices
//!    (`SPECIAL`) within the launch limits, padded threads masked;
//!    grouped reduces (`GROUP`) go through shared memory with a barrier
//!    ([`group_reduce`]);
//! 3. [`expand`]: `UPCAST` ranges (from the optimizer) become one store
//!    per lane, or per vector of lanes on targets with vectors;
//! 4. `crate::symbolic::symbolic()` simplifies the whole graph (index
//!    expressions above all), together with [`no_op_store`] (stores of a
//!    load of their own address disappear);
//! 5. [`decompose`]: ops the target cannot express are rewritten into ops
//!    it can (mandatory ones for every target, transcendental
//!    approximations per [`Caps`](crate::caps::Caps));
//! 6. [`slots`]: the element range each buffer slot may touch (interval
//!    arithmetic of [`bounds`]; for kernels with variables, also that range
//!    as expressions of them, built by `var_access`);
//! 7. [`vectorize`]: the vector lanes `expand` left become vector loads,
//!    stores, ALU ops and reduces (or per-lane scalars where they cannot);
//!    Then [`partial_vectors`]: the scalar partial accumulators of a
//!    `PARTIALS` tree become vector accumulators of the host's lanes,
//!    combined after the loop by vector ops and a halving of the lanes;
//! 8. [`reduce`]: each `REDUCE` becomes an accumulator register updated
//!    inside its loops;
//! 9. [`index_dtype`]: the abstract `Index` type becomes `i32` when every
//!    index expression provably fits, `i64` otherwise;
//! 10. [`linearize`]: the graph is scheduled into nested loop blocks and
//!     flattened into a list with explicit `RANGE` … `END` pairs and
//!     `IF` … `ENDIF` around gated stores.

pub mod bounds;
mod constraints;
pub mod decompose;
mod double_word;
pub mod expand;
pub mod gpu_dims;
mod group_reduce;
pub mod index_dtype;
pub mod linearize;
pub mod live;
mod lowered;
pub mod no_op_store;
pub mod partial_vectors;
pub mod reduce;
pub mod slots;
pub mod transcendental;
mod trig_reduction;
pub mod validate;
mod var_access;
pub mod vectorize;

use crate::rewrite::graph_rewrite;
use crate::uop::{Op, UOp};
use std::sync::Arc;

pub use lowered::{BufferSlot, GpuLaunch, LowerError, LowerOptions, LoweredKernel, ParallelLoop};
pub use var_access::AccessForm;

/// Lowers a kernel AST to a linear program (the stages in the module docs).
pub fn lower(ast: &Arc<UOp>, opts: &LowerOptions) -> Result<LoweredKernel, LowerError> {
    validate::validate(ast)?;
    let (ast, gpu) = match &opts.caps.launch {
        Some(limits) => {
            let (g, launch) = gpu_dims::map_gpu_dims(ast, limits)?;
            (g, Some(launch))
        }
        None => (ast.clone(), None),
    };
    let ast = &ast;
    let mut g = expand::expand_upcasts(ast, &opts.caps);
    if !opts.noopt {
        let mut pm = crate::symbolic::symbolic();
        pm.extend(&no_op_store::no_op_stores());
        g = graph_rewrite(&pm, &g, &mut ())?;
    }
    g = decompose::decompose(&g, &opts.caps)?;
    let buffers = slots::buffer_slots(&g, ast)?;
    let g = vectorize::vectorize(&g, &opts.caps);
    let g = partial_vectors::vectorize_partials(&g, &opts.caps, !opts.noopt);
    let fma = opts.fma && opts.caps.native.contains(Op::MulAcc);
    let g = reduce::lower_reduces(&g, fma)?;
    let (g, index_dtype, no_overflow) = index_dtype::lower_index_dtype(&g, opts.caps.index_i64);
    let program = linearize::linearize(&g)?;
    let guarded = program
        .ops
        .iter()
        .filter(|n| {
            n.op() == Op::Index
                && crate::kernel::indexes_global(n)
                && bounds::is_data_dependent(n.s(1))
        })
        .map(|n| n.id())
        .collect();
    Ok(LoweredKernel {
        name: opts.name.clone(),
        ops: program.ops,
        buffers,
        // A GPU's threads are its parallelism: no host splits a loop.
        parallel: program.parallel.filter(|_| gpu.is_none()),
        index_dtype,
        no_overflow,
        guarded,
        gpu,
    })
}

#[cfg(test)]
pub(crate) mod tests;
