//! The LLVM IR builder: a [`LoweredKernel`] becomes one LLVM function with
//! the CPU kernel ABI ([`crate::cpu::KernelFn`]), built with inkwell's
//! builder API.
//!
//! The generated code has exactly the semantics the C codegen documents
//! (`c/render.rs`): IEEE floats without fast-math flags, NaN-propagating
//! `MAX`/`MIN`, wrapping integer arithmetic (plain `add`/`sub`/`mul`
//! wrap in LLVM; `nsw` only on index arithmetic lowering proved free of
//! overflow), truncating division and remainder with division by zero
//! giving 0 and `MIN / -1` wrapping (the divisor is replaced by 1 before
//! the instruction, so nothing traps), masked shift amounts, saturating
//! float → integer casts (`llvm.fpto[su]i.sat`, NaN → 0), `f16`/`bf16`
//! computed in `float` and rounded back after every op (see [`super::half`]),
//! `bool` stored as bytes, guarded accesses checked against `sizes[slot]`.
//!
//! Structure: counters of loops are phi nodes (`header: i = phi [start,
//! pre], [i + 1, latch]`), `IF` is a conditional branch to a merge block,
//! gated or guarded loads branch around the load and merge with a phi of
//! the loaded value and 0; accumulators (`DEFINE_REG`, scalar or vector)
//! are allocas in the entry block, which the O3 pipeline promotes to phis.
//! Vector values (lowering's vectorized lanes) are LLVM vector types, see
//! [`super::vector`]; ALU ops and casts are in [`super::alu`], buffer
//! accesses (`INDEX`, `LOAD`, `STORE`) in [`super::memory`].
//!
//! Transcendentals: `SQRT` is `llvm.sqrt` and `RSQRT` is `1 / llvm.sqrt`
//! (both correctly rounded, bit-identical to C's libm `sqrt`); every other
//! transcendental is decomposed by the core into polynomial code (see
//! [`LlvmRenderer::caps`](super::LlvmRenderer)). Float `MOD` is `frem`
//! (libm `fmod`), `MULACC` on floats is `llvm.fma`.

use crate::cpu::codegen::is_parallel_loop;
use crate::cpu::guard::Guards;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, IntType};
use inkwell::values::ValueKind;
use inkwell::values::{
    BasicValue, BasicValueEnum, FloatValue, FunctionValue, IntValue, PhiValue, PointerValue,
};
use inkwell::IntPredicate;
use morok_core::dtype::{AddrSpace, ScalarType};
use morok_core::render::RenderError;
use morok_core::uop::{Arg, ConstValue, Op, UOp};
use morok_core::LoweredKernel;
use std::collections::HashMap;
use std::sync::Arc;

pub(super) type R<T> = Result<T, RenderError>;

pub(super) fn err(n: &UOp, what: impl Into<String>) -> RenderError {
    RenderError {
        renderer: "LLVM".to_string(),
        node: format!("{n:?}"),
        what: what.into(),
    }
}

/// A builder failure (an internal invariant: the builder is always
/// positioned) as a render error.
pub(super) fn be(e: BuilderError) -> RenderError {
    RenderError {
        renderer: "LLVM".to_string(),
        node: "IR builder".to_string(),
        what: e.to_string(),
    }
}

/// An open block structure: a loop or an `IF`.
enum Frame<'ctx> {
    Loop {
        header: BasicBlock<'ctx>,
        exit: BasicBlock<'ctx>,
        counter: PhiValue<'ctx>,
    },
    If {
        merge: BasicBlock<'ctx>,
    },
}

/// Building state of one kernel.
pub(super) struct Gen<'ctx, 'k> {
    pub(super) cx: &'ctx Context,
    pub(super) b: Builder<'ctx>,
    module: Module<'ctx>,
    pub(super) kernel: &'k LoweredKernel,
    pub(super) func: FunctionValue<'ctx>,
    /// Builder for allocas, at the end of the entry block.
    allocas: Builder<'ctx>,
    values: HashMap<u64, BasicValueEnum<'ctx>>,
    /// Run-time bounds conditions of guarded accesses.
    pub(super) guards: Guards<IntValue<'ctx>>,
    vars: HashMap<String, u64>,
    frames: Vec<Frame<'ctx>>,
    /// Whether stores may be non-temporal (an x86-64 target, see
    /// [`crate::cpu::stream`]).
    pub(super) may_stream: bool,
    /// Whether a store was made non-temporal: the kernel then ends with
    /// an `sfence`.
    pub(super) streamed: bool,
    /// Whether global accesses get the sanitizer mode's bounds checks
    /// ([`super::bounds`]).
    pub(super) bounds_checks: bool,
}

/// Builds the module of `kernel`: one function named after it with the
/// kernel ABI, and the LLVM version as `llvm.ident`. The module has no
/// target set (the caller sets triple and data layout); `x86_64` says
/// whether it is for an x86-64 target, where the vector stores the shared
/// rule picks ([`crate::cpu::stream::streams`]) are `!nontemporal` and
/// the kernel ends with `llvm.x86.sse.sfence`. In the sanitizer mode
/// (`MOROK_SANITIZE`, read once per process) every global access is
/// checked against its buffer's size ([`super::bounds`]); the checks are
/// part of the IR text, so of the object cache key.
pub(super) fn build_module<'ctx>(
    cx: &'ctx Context,
    kernel: &LoweredKernel,
    x86_64: bool,
) -> R<Module<'ctx>> {
    crate::cpu::codegen::check_entry_name(kernel, "LLVM")?;
    let module = cx.create_module(&kernel.name);
    // The producer, as `llvm.ident` (shown with the IR: which LLVM built it).
    let ident = cx.metadata_string(&format!("morok, LLVM {}", super::llvm_version()));
    module
        .add_global_metadata("llvm.ident", &cx.metadata_node(&[ident.into()]))
        .map_err(|e| RenderError {
            renderer: "LLVM".to_string(),
            node: kernel.name.clone(),
            what: e.to_string(),
        })?;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let i64t = cx.i64_type();
    let fn_type = cx.void_type().fn_type(
        &[ptr.into(), ptr.into(), ptr.into(), i64t.into(), i64t.into()],
        false,
    );
    let func = module.add_function(&kernel.name, fn_type, None);
    for (i, name) in ["bufs", "sizes", "vars", "gstart", "gend"]
        .iter()
        .enumerate()
    {
        if let Some(p) = func.get_nth_param(i as u32) {
            p.set_name(name);
        }
    }
    let entry = cx.append_basic_block(func, "entry");
    let body = cx.append_basic_block(func, "body");
    let allocas = cx.create_builder();
    allocas.position_at_end(entry);
    let b = cx.create_builder();
    b.position_at_end(body);
    let mut g = Gen {
        cx,
        b,
        module,
        kernel,
        func,
        allocas,
        values: HashMap::new(),
        guards: Guards::new("LLVM"),
        vars: HashMap::new(),
        frames: Vec::new(),
        may_stream: x86_64,
        streamed: false,
        bounds_checks: crate::host::sanitize_requested(),
    };
    for n in &kernel.ops {
        g.op(n)?;
    }
    if !g.frames.is_empty() {
        return Err(RenderError {
            renderer: "LLVM".to_string(),
            node: kernel.name.clone(),
            what: "a loop or IF is not closed".to_string(),
        });
    }
    if g.streamed {
        let sfence = Intrinsic::find("llvm.x86.sse.sfence")
            .and_then(|i| i.get_declaration(&g.module, &[]))
            .ok_or_else(|| RenderError {
                renderer: "LLVM".to_string(),
                node: kernel.name.clone(),
                what: "no llvm.x86.sse.sfence".to_string(),
            })?;
        g.b.build_call(sfence, &[], "").map_err(be)?;
    }
    g.b.build_return(None).map_err(be)?;
    g.allocas.build_unconditional_branch(body).map_err(be)?;
    Ok(g.module)
}

impl<'ctx> Gen<'ctx, '_> {
    /// The module being built.
    pub(super) fn module(&self) -> &Module<'ctx> {
        &self.module
    }

    pub(super) fn param(&self, i: u32) -> R<BasicValueEnum<'ctx>> {
        self.func.get_nth_param(i).ok_or_else(|| RenderError {
            renderer: "LLVM".to_string(),
            node: self.kernel.name.clone(),
            what: format!("missing parameter {i}"),
        })
    }

    /// The register type of scalar type `t` (`bool` is `i1`, halves
    /// compute in `float`).
    pub(super) fn value_type(&self, n: &UOp, t: ScalarType) -> R<BasicTypeEnum<'ctx>> {
        let cx = self.cx;
        Ok(match t {
            ScalarType::Bool => cx.bool_type().into(),
            ScalarType::I8 | ScalarType::U8 => cx.i8_type().into(),
            ScalarType::I16 | ScalarType::U16 => cx.i16_type().into(),
            ScalarType::I32 | ScalarType::U32 => cx.i32_type().into(),
            ScalarType::I64 | ScalarType::U64 => cx.i64_type().into(),
            ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 => cx.f32_type().into(),
            ScalarType::F64 => cx.f64_type().into(),
            ScalarType::Index | ScalarType::Void => {
                return Err(err(n, "no LLVM type for this dtype"))
            }
        })
    }

    /// The type an element of `t` is stored as in a global buffer.
    pub(super) fn storage_type(&self, n: &UOp, t: ScalarType) -> R<BasicTypeEnum<'ctx>> {
        match t {
            ScalarType::Bool => Ok(self.cx.i8_type().into()),
            ScalarType::F16 | ScalarType::BF16 => Ok(self.cx.i16_type().into()),
            t => self.value_type(n, t),
        }
    }

    /// The scalar type of `n`'s value (of each lane, for vectors).
    pub(super) fn scalar(&self, n: &UOp) -> R<ScalarType> {
        Ok(n.dtype().scalar_type())
    }

    pub(super) fn constant(
        &self,
        n: &UOp,
        c: ConstValue,
        t: ScalarType,
    ) -> R<BasicValueEnum<'ctx>> {
        let ty = self.value_type(n, t)?;
        Ok(match ty {
            BasicTypeEnum::IntType(it) if t.is_bool() => {
                it.const_int(c.truthy() as u64, false).into()
            }
            BasicTypeEnum::IntType(it) => {
                let v = c.as_i128().unwrap_or(0);
                it.const_int(v as u64, t.is_signed_int()).into()
            }
            BasicTypeEnum::FloatType(ft) if t == ScalarType::F64 => {
                ft.const_float(c.as_f64()).into()
            }
            BasicTypeEnum::FloatType(ft) => ft.const_float(c.as_f64() as f32 as f64).into(),
            _ => return Err(err(n, "constant of an unsupported type")),
        })
    }

    /// The value of an operand (`AFTER` stands for its first operand).
    pub(super) fn value(&self, n: &Arc<UOp>) -> R<BasicValueEnum<'ctx>> {
        let mut n = n;
        while n.op() == Op::After {
            n = n.s(0);
        }
        if let Some(c) = n.const_value() {
            if n.dtype().is_vector() {
                return self.vector_constant(n, c);
            }
            let t = self.scalar(n)?;
            return self.constant(n, c, t);
        }
        self.values
            .get(&n.id())
            .copied()
            .ok_or_else(|| err(n, "operand used before it is defined"))
    }

    pub(super) fn int(&self, n: &Arc<UOp>) -> R<IntValue<'ctx>> {
        match self.value(n)? {
            BasicValueEnum::IntValue(v) => Ok(v),
            _ => Err(err(n, "expected an integer value")),
        }
    }

    pub(super) fn ptr(&self, n: &Arc<UOp>) -> R<PointerValue<'ctx>> {
        match self.value(n)? {
            BasicValueEnum::PointerValue(v) => Ok(v),
            _ => Err(err(n, "expected a pointer")),
        }
    }

    /// Calls the overloaded intrinsic `name` on `args`, overloaded on the
    /// types `overloads`.
    pub(super) fn intrinsic(
        &self,
        name: &str,
        overloads: &[BasicTypeEnum<'ctx>],
        args: &[BasicValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        let missing = || RenderError {
            renderer: "LLVM".to_string(),
            node: name.to_string(),
            what: "intrinsic not found".to_string(),
        };
        let f = Intrinsic::find(name)
            .and_then(|i| i.get_declaration(&self.module, overloads))
            .ok_or_else(missing)?;
        let args: Vec<_> = args.iter().map(|a| (*a).into()).collect();
        match self
            .b
            .build_call(f, &args, "")
            .map_err(be)?
            .try_as_basic_value()
        {
            ValueKind::Basic(v) => Ok(v),
            ValueKind::Instruction(_) => Err(missing()),
        }
    }

    /// A float intrinsic with one operand, overloaded on its type.
    pub(super) fn unary_intrinsic(&self, name: &str, a: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let v = self.intrinsic(name, &[a.get_type().into()], &[a.into()])?;
        Ok(v.into_float_value())
    }

    /// Rounds a `float` to the half type `t` and back (identity otherwise).
    pub(super) fn round_half(&self, v: FloatValue<'ctx>, t: ScalarType) -> R<FloatValue<'ctx>> {
        match t {
            ScalarType::F16 => self.f16_to_f32(self.f32_to_f16(v)?),
            ScalarType::BF16 => self.bf16_to_f32(self.f32_to_bf16(v)?),
            _ => Ok(v),
        }
    }

    /// Whether lowering proved `n` free of overflow.
    pub(super) fn kernel_no_overflow(&self, n: &UOp) -> bool {
        self.kernel.no_overflow.contains(&n.id())
    }

    pub(super) fn define(&mut self, n: &UOp, v: impl BasicValue<'ctx>) {
        self.values.insert(n.id(), v.as_basic_value_enum());
    }

    pub(super) fn i64_load(
        &self,
        base: PointerValue<'ctx>,
        slot: u64,
        name: &str,
    ) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        // SAFETY: one `i64` constant index into `i64` elements (no
        // aggregate); at run time `sizes`/`vars` hold one entry per
        // slot/variable (the kernel ABI).
        let p = unsafe {
            self.b
                .build_gep(i64t, base, &[i64t.const_int(slot, false)], name)
        }
        .map_err(be)?;
        Ok(self
            .b
            .build_load(i64t, p, name)
            .map_err(be)?
            .into_int_value())
    }

    fn op(&mut self, n: &Arc<UOp>) -> R<()> {
        let cx = self.cx;
        match n.op() {
            Op::DefineGlobal => {
                let Arg::Int(slot) = *n.arg() else {
                    return Err(err(n, "DEFINE_GLOBAL without a slot"));
                };
                let ptr = cx.ptr_type(inkwell::AddressSpace::default());
                let bufs = self.param(0)?.into_pointer_value();
                let i64t = cx.i64_type();
                // SAFETY: inkwell's GEP is unsafe because LLVM misbehaves on
                // indices that do not fit the indexed type; this one indexes
                // a pointer array (`ptr`, no aggregate) with one `i64`
                // constant. At run time `bufs` holds one pointer per slot
                // (the kernel ABI), so the address is inside it.
                let p = unsafe {
                    self.b
                        .build_gep(ptr, bufs, &[i64t.const_int(slot as u64, false)], "")
                }
                .map_err(be)?;
                let data = self
                    .b
                    .build_load(ptr, p, &format!("data{slot}"))
                    .map_err(be)?;
                self.define(n, data);
            }
            Op::DefineReg => {
                if n.dtype().addr_space() != Some(AddrSpace::Reg) {
                    return Err(err(n, "DEFINE_REG must be a register pointer"));
                }
                let ty = self.dtype_type(n, n.dtype().pointee())?;
                let p = self.allocas.build_alloca(ty, "acc").map_err(be)?;
                self.define(n, p);
            }
            Op::Const => {}
            Op::Range => self.open_loop(n)?,
            Op::End => match self.frames.pop() {
                Some(Frame::Loop {
                    header,
                    exit,
                    counter,
                }) => {
                    let i = counter.as_basic_value().into_int_value();
                    let next = self
                        .b
                        .build_int_nsw_add(i, i.get_type().const_int(1, false), "next")
                        .map_err(be)?;
                    let latch = self
                        .b
                        .get_insert_block()
                        .ok_or_else(|| err(n, "no block"))?;
                    counter.add_incoming(&[(&next, latch)]);
                    self.b.build_unconditional_branch(header).map_err(be)?;
                    self.b.position_at_end(exit);
                }
                _ => return Err(err(n, "END without an open loop")),
            },
            Op::If => {
                let gate = self.int(n.s(0))?;
                let then = cx.append_basic_block(self.func, "then");
                let merge = cx.append_basic_block(self.func, "endif");
                self.b
                    .build_conditional_branch(gate, then, merge)
                    .map_err(be)?;
                self.b.position_at_end(then);
                self.frames.push(Frame::If { merge });
            }
            Op::EndIf => match self.frames.pop() {
                Some(Frame::If { merge }) => {
                    self.b.build_unconditional_branch(merge).map_err(be)?;
                    self.b.position_at_end(merge);
                }
                _ => return Err(err(n, "ENDIF without an open IF")),
            },
            Op::Index => self.index(n)?,
            Op::Load => self.load(n)?,
            Op::Store => self.store(n)?,
            Op::DefineVar => {
                let Arg::Var { name, .. } = n.arg() else {
                    return Err(err(n, "DEFINE_VAR without a Var arg"));
                };
                let next = self.vars.len() as u64;
                let pos = *self.vars.entry(name.to_string()).or_insert(next);
                let vars = self.param(2)?.into_pointer_value();
                let v = self.i64_load(vars, pos, name)?;
                let ty = self.value_type(n, self.scalar(n)?)?.into_int_type();
                let v = self
                    .b
                    .build_int_cast_sign_flag(v, ty, true, "")
                    .map_err(be)?;
                self.define(n, v);
            }
            Op::Vectorize => {
                let v = self.vectorize(n)?;
                self.define(n, v);
            }
            Op::Gep => {
                let v = self.gep(n)?;
                self.define(n, v);
            }
            _ => {
                let v: Vec<BasicValueEnum<'ctx>> = n
                    .src()
                    .iter()
                    .map(|x| self.value(x))
                    .collect::<Result<_, _>>()?;
                let e = if n.dtype().is_vector() {
                    self.vector_op(n, &v, |lanes| self.scalar_op(n, lanes))?
                } else {
                    self.scalar_op(n, &v)?
                };
                self.define(n, e);
            }
        }
        Ok(())
    }

    fn open_loop(&mut self, n: &Arc<UOp>) -> R<()> {
        let ty: IntType<'ctx> = match self.value_type(n, self.scalar(n)?)? {
            BasicTypeEnum::IntType(t) => t,
            _ => return Err(err(n, "RANGE of a non-integer type")),
        };
        let (start, end) = if is_parallel_loop(self.kernel, n) {
            let gs = self.param(3)?.into_int_value();
            let ge = self.param(4)?.into_int_value();
            (
                self.b
                    .build_int_truncate_or_bit_cast(gs, ty, "gstart")
                    .map_err(be)?,
                self.b
                    .build_int_truncate_or_bit_cast(ge, ty, "gend")
                    .map_err(be)?,
            )
        } else {
            (ty.const_zero(), self.int(n.s(0))?)
        };
        let pre = self
            .b
            .get_insert_block()
            .ok_or_else(|| err(n, "no block"))?;
        let header = self.cx.append_basic_block(self.func, "loop");
        let body = self.cx.append_basic_block(self.func, "body");
        let exit = self.cx.append_basic_block(self.func, "exit");
        self.b.build_unconditional_branch(header).map_err(be)?;
        self.b.position_at_end(header);
        let counter = self.b.build_phi(ty, "ridx").map_err(be)?;
        counter.add_incoming(&[(&start, pre)]);
        let i = counter.as_basic_value().into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, i, end, "")
            .map_err(be)?;
        self.b
            .build_conditional_branch(more, body, exit)
            .map_err(be)?;
        self.b.position_at_end(body);
        self.define(n, i);
        self.frames.push(Frame::Loop {
            header,
            exit,
            counter,
        });
        Ok(())
    }
}
