//! Buffers, registers, loads and stores of the C renderer: `DEFINE_GLOBAL`
//! pointers, `DEFINE_REG` accumulators, CUDA's `DEFINE_LOCAL` shared
//! arrays and `BARRIER`s, `INDEX` places (with the run-time
//! bounds guards of [`crate::cpu::guard`]), and loads and stores in the
//! buffers' storage forms (halves as their bits, `bool` as bytes, vectors
//! through the unaligned or streaming helpers of [`super::prelude`]).

use super::render::{err, Ctx, Dialect};
use super::types::{c_type, literal, storage_type, vector_type};
use crate::cpu::guard::Place;
use morok_core::dtype::{AddrSpace, ScalarType};
use morok_core::indexes_global;
use morok_core::render::RenderError;
use morok_core::uop::{Arg, ConstValue, UOp};
use std::sync::Arc;

impl Ctx<'_> {
    /// `DEFINE_GLOBAL`: the slot's buffer as a `restrict` pointer of its
    /// storage type, `const` unless the kernel writes it (in CUDA the
    /// kernel's parameter `data{slot}`, declared by its frame).
    pub(super) fn define_global(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let Arg::Int(slot) = *n.arg() else {
            return Err(err(n, "DEFINE_GLOBAL without a slot"));
        };
        let st = n.dtype().scalar_type();
        let ty = storage_type(st).ok_or_else(|| err(n, "no C type for buffer"))?;
        let written = self
            .kernel
            .buffers
            .get(slot as usize)
            .is_some_and(|b| b.written);
        let cq = if written { "" } else { "const " };
        let name = format!("data{slot}");
        if self.dialect == Dialect::C {
            self.line(&format!(
                "{cq}{ty} *restrict {name} = ({cq}{ty} *)bufs[{slot}];"
            ));
        }
        self.names.insert(n.id(), name);
        Ok(())
    }

    /// `DEFINE_LOCAL(n)` (CUDA): a `__shared__` array of `n` elements of
    /// the value type (like registers, shared memory holds values, not
    /// the storage form).
    pub(super) fn define_local(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let (Arg::Int(k), Some(size)) = (n.arg(), n.src().first().and_then(|s| s.const_value()))
        else {
            return Err(err(n, "DEFINE_LOCAL without a number and a constant size"));
        };
        if self.dialect != Dialect::Cuda {
            return Err(err(n, "shared memory exists only on GPU targets"));
        }
        let ty = c_type(n, n.dtype().pointee())?;
        let name = format!("shared{k}");
        self.line(&format!(
            "__shared__ {ty} {name}[{}];",
            size.as_i64().unwrap_or(0)
        ));
        self.names.insert(n.id(), name);
        Ok(())
    }

    /// `BARRIER` (CUDA): every thread of the block waits until all reach
    /// it, and their shared-memory stores before it are visible.
    pub(super) fn barrier(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        if self.dialect != Dialect::Cuda {
            return Err(err(n, "barriers exist only on GPU targets"));
        }
        self.line("__syncthreads();");
        Ok(())
    }

    /// `DEFINE_REG`: an accumulator variable of the pointee's type.
    pub(super) fn define_reg(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let Arg::Int(slot) = *n.arg() else {
            return Err(err(n, "DEFINE_REG without a slot"));
        };
        if n.dtype().addr_space() != Some(AddrSpace::Reg) {
            return Err(err(n, "DEFINE_REG must be a register pointer"));
        }
        let ty = c_type(n, n.dtype().pointee())?;
        let name = format!("acc{slot}");
        self.line(&format!("{ty} {name};"));
        self.names.insert(n.id(), name);
        Ok(())
    }

    /// `INDEX`: the place `data[idx]` (or the register itself), with the
    /// bounds condition of a guarded access recorded for its loads and
    /// stores.
    pub(super) fn index(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let buf = self.name(n.s(0))?;
        let place = match self.guards.place(self.kernel, n)? {
            Place::Register => buf,
            Place::Buffer { guard } => {
                let idx = self.name(n.s(1))?;
                if let Some(slot) = guard {
                    let size = self.buffer_size(slot);
                    self.guards
                        .insert(n, format!("({idx} >= 0 && (int64_t){idx} < {size})"));
                }
                format!("{buf}[{idx}]")
            }
        };
        self.names.insert(n.id(), place);
        Ok(())
    }

    /// `LOAD`: the element in its value form, 0 where the gate or the
    /// bounds guard fails.
    pub(super) fn load(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let index = n.s(0);
        let place = self.name(index)?;
        let st = n.dtype().scalar_type();
        // Only global buffers hold the storage form; registers hold
        // the value type (`float` for the halves).
        let global = indexes_global(index);
        let vector = n.dtype().is_vector();
        let conds = self.guards.load(n, |gate| self.name(gate))?;
        let value = match st {
            _ if vector && global => format!("{}_load(&{place})", self.vtype(n)?),
            ScalarType::F16 if global => format!("morok_f16_to_f32({place})"),
            ScalarType::BF16 if global => format!("morok_bf16_to_f32({place})"),
            ScalarType::Bool if global => format!("({place} != 0)"),
            _ => place,
        };
        let zero = if vector {
            self.vector_literal(&self.vtype(n)?, "0")
        } else {
            literal(ConstValue::zero(st), st)
        };
        let expr = if conds.is_empty() {
            value
        } else {
            format!("({} ? {value} : {zero})", conds.join(" && "))
        };
        self.define(n, expr)
    }

    /// `STORE`: the value in the storage form, skipped where the bounds
    /// guard fails; a vector store to a buffer streams where the shared
    /// rule says so.
    pub(super) fn store(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let index = n.s(0);
        let guard = self.guards.store(n)?;
        let place = self.name(index)?;
        let v = self.name(n.s(1))?;
        let global = indexes_global(index);
        if n.s(1).dtype().is_vector() {
            let line = if global {
                let stream = self.dialect == Dialect::C && self.streams(n);
                let how = if stream { "stream" } else { "store" };
                format!("{}_{how}(&{place}, {v});", self.vtype(n.s(1))?)
            } else {
                format!("{place} = {v};")
            };
            self.line(&line);
            return Ok(());
        }
        let v = match n.s(1).dtype().scalar_type() {
            ScalarType::F16 if global => format!("morok_f32_to_f16({v})"),
            ScalarType::BF16 if global => format!("morok_f32_to_bf16({v})"),
            ScalarType::Bool if global => format!("(uint8_t){v}"),
            _ => v,
        };
        match guard {
            Some(cond) => self.line(&format!("if {cond} {place} = {v};")),
            None => self.line(&format!("{place} = {v};")),
        }
        Ok(())
    }

    /// Whether the vector store `n` to a global buffer streams (the
    /// shared rule, [`crate::cpu::stream::streams`]); records its vector
    /// type when it does.
    fn streams(&mut self, n: &Arc<UOp>) -> bool {
        let name = vector_type(n.s(1).dtype());
        match name {
            Some(name) if crate::cpu::stream::streams(self.kernel, n) => {
                self.streamed.insert(name);
                true
            }
            _ => false,
        }
    }
}
