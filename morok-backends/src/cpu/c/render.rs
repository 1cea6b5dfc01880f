//! The C renderer: a [`LoweredKernel`] becomes one C11 function.
//!
//! # Calling convention
//!
//! ```c
//! void NAME(void *const *bufs, const int64_t *sizes, const int64_t *vars,
//!           int64_t gstart, int64_t gend);
//! ```
//!
//! `bufs[i]` is the buffer of `DEFINE_GLOBAL` slot `i` and `sizes[i]` its
//! element count, against which the accesses lowering marked as guarded
//! (`LoweredKernel::guarded`: data-dependent offsets) are checked when
//! they execute (an out-of-range read yields 0, an out-of-range write is
//! dropped; all other accesses are proven in bounds before the call, see
//! `BufferSlot::access`). `vars[k]` is the value of the `k`-th scalar
//! variable (`DEFINE_VAR`, in order of first appearance). When the kernel has
//! a parallel loop, it runs only the iterations `[gstart, gend)` of it, so
//! the host can split the loop across threads; otherwise both are ignored.
//!
//! # Semantics the generated code guarantees
//!
//! - Floats follow IEEE 754 exactly (no fast-math; see the compiler flags
//!   in `compiler.rs`). `f16` and `bf16` values live in `float` registers
//!   and every operation producing one is rounded back to the type
//!   (round to nearest even): for `+ - * /` and `sqrt` this equals native
//!   half arithmetic, because `float` has more than twice the precision
//!   plus two bits. Conversions are bit manipulation helpers, so any C
//!   compiler works.
//! - `MAX`/`MIN` propagate NaN.
//! - Signed integer `+ - *`, negation and left shifts wrap (computed in
//!   unsigned arithmetic), except for index arithmetic proven not to
//!   overflow (`LoweredKernel::no_overflow`), which stays plain so the C
//!   compiler can reason about loop induction variables.
//! - Integer division and remainder truncate (C semantics). Division or
//!   remainder by zero yields 0, and `MIN / -1` wraps to `MIN` (its
//!   remainder is 0): nothing traps.
//! - Shift amounts are masked to the type's width.
//! - Float → integer casts saturate and map NaN to 0 (Rust `as`).
//! - `bool` buffers are bytes; any non-zero byte reads as true.
//!
//! # Files
//!
//! This file holds the kernel's frame and control flow (loops, `IF`,
//! variables); `alu.rs` the ALU ops and casts, `memory.rs` buffers,
//! loads and stores (with the bounds guards shared with the LLVM codegen,
//! `cpu/guard.rs`), `types.rs` C types and literals, `prelude.rs` the
//! helper definitions a source starts with.

use super::types::{c_type, literal};
use crate::cpu::codegen::is_parallel_loop;
use crate::cpu::guard::Guards;
use morok_core::render::{Caps, RenderError, RenderedKernel, Renderer};
use morok_core::uop::{Arg, Op, UOp};
use morok_core::LoweredKernel;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;
use std::sync::Arc;

/// Renders linear programs as C11 for the system C compiler.
#[derive(Clone, Copy, Debug, Default)]
pub struct CRenderer;

/// The language a kernel body is rendered in: C11 for the host compiler,
/// or CUDA C++ (feature `cuda`), which shares every expression form and
/// differs in the frame: buffers, sizes and variables are kernel
/// parameters (`data{slot}`, `size{slot}`, `var{k}`) instead of arrays,
/// and the hardware indices (`SPECIAL`) are `blockIdx`/`threadIdx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// C11 (the calling convention in the module docs).
    C,
    /// CUDA C++ (see `crate::cuda`).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Cuda,
}

/// A rendered kernel body and what its frame must provide.
pub(crate) struct Body {
    /// The statements, indented one level.
    pub(crate) code: String,
    /// Scalar variables the body reads (`vars[k]` / `var{k}`, `k` below).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) vars: usize,
    /// Whether a load is pinned to a register (the prelude's helper).
    pub(crate) in_register: bool,
    /// The vector types stored with streaming stores.
    pub(crate) streamed: BTreeSet<String>,
}

/// Renders the statements of `kernel` in `dialect`.
pub(crate) fn render_body(kernel: &LoweredKernel, dialect: Dialect) -> Result<Body, RenderError> {
    let mut ctx = Ctx {
        kernel,
        dialect,
        names: HashMap::new(),
        guards: Guards::new("C"),
        vars: HashMap::new(),
        next: 0,
        out: String::new(),
        depth: 1,
        streamed: Default::default(),
        in_register: match dialect {
            Dialect::C => super::registers::shared_fma_loads(kernel),
            Dialect::Cuda => HashSet::new(),
        },
        wmma_issued: HashMap::new(),
    };
    for n in &kernel.ops {
        ctx.op(n)?;
    }
    Ok(Body {
        code: ctx.out,
        vars: ctx.vars.len(),
        in_register: !ctx.in_register.is_empty(),
        streamed: ctx.streamed,
    })
}

/// Rendering state of one kernel.
pub(super) struct Ctx<'a> {
    pub(super) kernel: &'a LoweredKernel,
    pub(super) dialect: Dialect,
    pub(super) names: HashMap<u64, String>,
    /// Run-time bounds conditions of the accesses lowering marked as
    /// guarded ([`LoweredKernel::guarded`]).
    pub(super) guards: Guards<String>,
    /// Launch-order positions of the scalar variables, by name.
    vars: HashMap<String, usize>,
    /// Counter for variable names: names follow program order, never node
    /// ids, so equal programs render to equal source (the cache key).
    next: usize,
    out: String,
    depth: usize,
    /// The vector types stored with non-temporal stores (see
    /// [`crate::cpu::stream`]); the kernel fences them before it returns.
    pub(super) streamed: BTreeSet<String>,
    /// The vector loads kept in a register (see [`super::registers`]).
    in_register: HashSet<u64>,
    /// The tensor-core instructions issued so far: their result array by
    /// their fragment operands (see [`super::warp`]).
    pub(super) wmma_issued: HashMap<Vec<u64>, String>,
}

pub(super) fn err(n: &UOp, what: impl Into<String>) -> RenderError {
    RenderError {
        renderer: "C".to_string(),
        node: format!("{n:?}"),
        what: what.into(),
    }
}

impl Ctx<'_> {
    pub(super) fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// The C expression of an operand (`AFTER` stands for its first operand).
    pub(super) fn name(&self, n: &Arc<UOp>) -> Result<String, RenderError> {
        let mut n = n;
        while n.op() == Op::After {
            n = n.s(0);
        }
        if let Some(c) = n.const_value() {
            let ty = self.vtype(n)?;
            let mut lit = literal(c, n.dtype().scalar_type());
            if n.dtype().is_vector() {
                if n.dtype().is_bool() {
                    lit = if c.truthy() { "-1" } else { "0" }.to_string();
                }
                let lanes = vec![lit; n.dtype().count() as usize];
                return Ok(self.vector_literal(&ty, &lanes.join(", ")));
            }
            return Ok(lit);
        }
        self.names
            .get(&n.id())
            .cloned()
            .ok_or_else(|| err(n, "operand used before it is defined"))
    }

    /// The C type of `n`'s value: a scalar type, or for a vector of a
    /// vector element type its GCC/Clang vector typedef.
    pub(super) fn vtype(&self, n: &UOp) -> Result<String, RenderError> {
        c_type(n, n.dtype())
    }

    /// The operand strings of `n` for lane `lane` (`x[lane]` for vector
    /// operands), or the whole operands when `lane` is `None`.
    pub(super) fn operands(
        &self,
        n: &Arc<UOp>,
        lane: Option<usize>,
    ) -> Result<Vec<String>, RenderError> {
        n.src()
            .iter()
            .map(|x| {
                let name = self.name(x)?;
                Ok(match lane {
                    Some(i) if x.dtype().is_vector() && x.dtype().is_bool() => {
                        format!("({name}[{i}] != 0)")
                    }
                    Some(i) if x.dtype().is_vector() => format!("{name}[{i}]"),
                    _ => name,
                })
            })
            .collect()
    }

    /// `(T){e(0), ..., e(w-1)}`: a vector built lane by lane from the
    /// scalar expression of each lane.
    pub(super) fn lanewise(
        &self,
        n: &Arc<UOp>,
        lane: impl Fn(usize) -> Result<String, RenderError>,
    ) -> Result<String, RenderError> {
        let mask = n.dtype().is_bool();
        let lanes: Vec<String> = (0..n.dtype().count() as usize)
            .map(|i| {
                Ok(if mask {
                    format!("-(int32_t)({})", lane(i)?)
                } else {
                    lane(i)?
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(self.vector_literal(&self.vtype(n)?, &lanes.join(", ")))
    }

    /// A vector of type `ty` built from its lanes (`lanes`, comma
    /// separated): a compound literal in C, list initialization of the
    /// lanes' struct in CUDA.
    pub(super) fn vector_literal(&self, ty: &str, lanes: &str) -> String {
        match self.dialect {
            Dialect::C => format!("(({ty}){{{lanes}}})"),
            Dialect::Cuda => format!("{ty}{{{lanes}}}"),
        }
    }

    /// A fresh variable name with `prefix`.
    pub(super) fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next - 1)
    }

    /// Declares a fresh variable with the value of `expr`; one of the
    /// loads in `in_register` is pinned to a register after it.
    pub(super) fn define(&mut self, n: &UOp, expr: String) -> Result<(), RenderError> {
        let ty = self.vtype(n)?;
        let name = self.fresh("v");
        if self.in_register.contains(&n.id()) {
            self.line(&format!("{ty} {name} = {expr}; MOROK_IN_REGISTER({name});"));
        } else {
            self.line(&format!("const {ty} {name} = {expr};"));
        }
        self.names.insert(n.id(), name);
        Ok(())
    }

    /// Renders one op of the linear program.
    fn op(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        match n.op() {
            Op::DefineGlobal => self.define_global(n),
            Op::DefineReg => self.define_reg(n),
            Op::DefineLocal => self.define_local(n),
            Op::Barrier => self.barrier(n),
            Op::DefineVar => self.define_var(n),
            Op::Const => Ok(()),
            Op::Range => self.open_loop(n),
            Op::Special => self.special(n),
            Op::If => {
                let gate = self.name(n.s(0))?;
                self.open_block(&format!("if ({gate}) {{"));
                Ok(())
            }
            Op::End | Op::EndIf => {
                self.depth = self.depth.saturating_sub(1);
                self.line("}");
                Ok(())
            }
            Op::Index => self.index(n),
            Op::Load => self.load(n),
            Op::Store => self.store(n),
            Op::Bitcast if !n.dtype().is_vector() => self.bitcast(n),
            Op::Wmma => self.wmma(n),
            Op::ShuffleXor => self.shuffle_xor(n),
            _ => {
                let e = self.value(n)?;
                self.define(n, e)
            }
        }
    }

    /// Writes `head` (a `for` or `if` ending in `{`) and indents what follows.
    fn open_block(&mut self, head: &str) {
        self.line(head);
        self.depth += 1;
    }

    /// `RANGE`: a `for` loop over `0..end`, or for the parallel loop over
    /// the launch's `[gstart, gend)`.
    fn open_loop(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let ty = self.vtype(n)?;
        let name = self.fresh("ridx");
        let (start, end) = if is_parallel_loop(self.kernel, n) {
            (format!("({ty})gstart"), format!("({ty})gend"))
        } else {
            ("0".to_string(), self.name(n.s(0))?)
        };
        self.open_block(&format!(
            "for ({ty} {name} = {start}; {name} < {end}; {name}++) {{"
        ));
        self.names.insert(n.id(), name);
        Ok(())
    }

    /// `DEFINE_VAR`: the variable's value from `vars`, at its launch-order
    /// position (first appearance).
    fn define_var(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let Arg::Var { name, .. } = n.arg() else {
            return Err(err(n, "DEFINE_VAR without a Var arg"));
        };
        let next = self.vars.len();
        let pos = *self.vars.entry(name.to_string()).or_insert(next);
        let ty = self.vtype(n)?;
        match self.dialect {
            Dialect::C => self.define(n, format!("({ty})vars[{pos}]")),
            Dialect::Cuda => self.define(n, format!("({ty})var{pos}")),
        }
    }

    /// `SPECIAL`: a hardware index of a GPU launch (`gidx0..2`: the block
    /// index, `lidx0..2`: the thread index in the block, `x, y, z`).
    fn special(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let Arg::Str(name) = n.arg() else {
            return Err(err(n, "SPECIAL without a name"));
        };
        let (base, dim) = match (self.dialect, name.split_at(name.len().saturating_sub(1))) {
            (Dialect::Cuda, ("gidx", d)) => ("blockIdx", d),
            (Dialect::Cuda, ("lidx", d)) => ("threadIdx", d),
            _ => return Err(err(n, "this target has no hardware index")),
        };
        let axis = match dim {
            "0" => "x",
            "1" => "y",
            "2" => "z",
            _ => return Err(err(n, "SPECIAL dimension beyond z")),
        };
        let ty = self.vtype(n)?;
        self.define(n, format!("({ty}){base}.{axis}"))
    }

    /// The element count of buffer `slot` in a bounds guard.
    pub(super) fn buffer_size(&self, slot: u64) -> String {
        match self.dialect {
            Dialect::C => format!("sizes[{slot}]"),
            Dialect::Cuda => format!("size{slot}"),
        }
    }
}

impl Renderer for CRenderer {
    fn name(&self) -> &str {
        "c"
    }

    /// libm provides every transcendental function, and `fma`/`fmaf`
    /// render `MULACC` where the host has FMA (`-march=native` makes them
    /// one instruction; elsewhere `MULACC` is not native, so lowering keeps
    /// a multiply and an add rather than calling libm's slow `fma`). Vectors are as wide as the host's registers
    /// (detected at run time; kernels are compiled with `-march=native`
    /// for the host they run on).
    fn caps(&self) -> Caps {
        let mut caps = Caps::all_native().with_vector_bytes(crate::host::host_vector_bytes());
        if crate::host::host_has_fma() {
            caps.native = caps.native.with(Op::MulAcc);
        }
        caps.with_vector_masks()
    }

    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError> {
        crate::cpu::codegen::check_entry_name(kernel, "C")?;
        let body = render_body(kernel, Dialect::C)?;
        let mut src = super::prelude::kernel_prelude(kernel, body.in_register, &body.streamed);
        let _ = writeln!(
            src,
            "\nvoid {}(void *const *bufs, const int64_t *sizes, const int64_t *vars, int64_t gstart, int64_t gend) {{",
            kernel.name
        );
        src.push_str("  (void)bufs; (void)sizes; (void)vars; (void)gstart; (void)gend;\n");
        src.push_str(&body.code);
        if !body.streamed.is_empty() {
            src.push_str("  morok_stream_fence();\n");
        }
        src.push_str("}\n");
        Ok(RenderedKernel {
            source: src,
            entry: kernel.name.clone(),
        })
    }
}
