//! `morok-core`: the device-independent compiler.
//!
//! Public modules are the interfaces:
//!
//! - [`dtype`], [`shape`]: scalar, vector and pointer types, type
//!   promotion, and shape rules;
//! - [`tensor_ops`]: the table of tensor ops a DSL body may call (names,
//!   arguments, element-type and shape rules);
//! - [`uop`]: the hash-consed IR node and the op set;
//! - [`rewrite`]: pattern matchers and the fixpoint graph rewriter (the
//!   `patterns!` macro from `morok-patterns` is re-exported here);
//! - [`gradient`]: reverse-mode differentiation of tensor-level graphs;
//! - [`target`], [`caps`], [`render`], [`program`] and [`device`]: what a
//!   backend describes, implements and receives;
//! - [`reference`](mod@reference): the f64 reference evaluator of
//!   tensor-level graphs (the test oracle); with feature `testing`, `interp`
//!   (a kernel-AST interpreter) and `sample_kernels`.
//!
//! The stages are private modules (`schedule`, `opt`, `lower`, `pipeline`,
//! `symbolic`, `kernel`, `random`; `docs/ARCHITECTURE.md` says what each
//! does and where it lives). Other crates use them only through the
//! re-exports below: [`schedule()`] and [`schedule_cached`] for tensor
//! graphs, [`compile_program`] for one kernel, [`optimize`] and
//! [`apply_opts`] for the optimizer, [`lower()`] for lowering alone,
//! [`simplify`] for expressions.

#![warn(missing_docs)]

extern crate self as morok_core;

// The interfaces: the IR, its types and shapes, the rewrite engine, and
// what backends implement and devices consume.
pub mod caps;
pub mod device;
pub mod dtype;
pub mod gradient;
#[cfg(any(test, feature = "testing"))]
pub mod interp;
pub mod profile;
pub mod program;
pub mod reference;
pub mod render;
pub mod rewrite;
#[cfg(any(test, feature = "testing"))]
pub mod sample_kernels;
pub mod shape;
pub mod target;
pub mod tensor_ops;
pub mod uop;

// The stages: other crates reach them only through the re-exports below.
mod kernel;
mod lower;
mod opt;
mod pipeline;
mod random;
mod schedule;
mod symbolic;

pub use dtype::{AddrSpace, DType, ScalarType};
pub use morok_patterns::patterns;
pub use rewrite::{graph_rewrite, PatternMatcher};
pub use uop::{new_buffer_id, Arg, AxisType, ConstValue, Op, ReduceOp, Shape, UOp};

/// Scheduling: tensor graphs become kernels in order.
pub use schedule::{
    instantiate::instantiate, pipeline_runs, row_fusion::MAX_FUSED_ROW, schedule,
    schedule_cache_len, schedule_cache_limit, schedule_cached, set_schedule_cache_limit,
    BufferKind, BufferSpec, Schedule, ScheduleError, ScheduleItem, DEFAULT_SCHEDULE_CACHE_LIMIT,
};

/// The per-kernel pipeline: kernel AST to [`program::Program`].
pub use pipeline::{
    compile_program, compile_with_opts, lower_optimized, render_program, CompileOptions,
    PipelineError,
};

/// The optimizer: heuristics, opt actions, and what a search driver
/// (the beam search in `morok-backends`) enumerates and applies.
pub use opt::{
    apply_heuristics, apply_opt, apply_opts,
    candidates::{neighbours, search_actions, upcast_lanes, MAX_UPCAST},
    gpu_heuristic::{gpu_optimizations, BLOCK_THREADS},
    heuristic::{hand_coded_optimizations, vector_register_tile},
    optimize, random_opts, BeamConfig, Opt, OptArg, OptError, OptKernel, OptMode, OptOps,
    COMPILE_LIMIT,
};

/// Lowering: kernel AST to a linear program, and the facts it proves.
pub use lower::{
    gpu_dims::map_gpu_dims,
    lower,
    vectorize::{min_decomposed_bytes, MIN_DECOMPOSED_BYTES},
    AccessForm, BufferSlot, GpuLaunch, LowerError, LowerOptions, LoweredKernel, ParallelLoop,
};

/// Facts about kernels that backends share with the optimizer.
pub use kernel::{indexes_global, threads_for_work, MIN_WORK_PER_THREAD};

/// Simplification of index and ALU expressions, and the facts it uses.
pub use symbolic::{
    bounds::int_bounds,
    eval::{bits_of, exec_alu, value_of_bits},
    linear::{Expand, Linear},
    rule_count, simplify, symbolic,
};

/// A canonical, structure-only form of an expression (test oracles
/// compare simplified expressions with it).
#[cfg(any(test, feature = "testing"))]
pub use symbolic::order::canonical;

/// Threefry-2x32, the counter-based generator behind `Op::Threefry`.
pub use random::threefry2x32;
