//! Buffer accesses of the IR builder: `INDEX` as a GEP (with the run-time
//! bounds guard of [`crate::cpu::guard`] where lowering asked for one),
//! loads and stores in the buffers' storage forms, gated and guarded ones
//! behind branches (a load merges with 0 in a phi), non-temporal vector
//! stores where the shared rule ([`crate::cpu::stream`]) picks them.

use super::ir::{be, err, Gen, R};
use crate::cpu::guard::Place;
use inkwell::values::{BasicValue, BasicValueEnum};
use inkwell::IntPredicate;
use morok_core::dtype::ScalarType;
use morok_core::indexes_global;
use morok_core::uop::{ConstValue, UOp};
use std::sync::Arc;

impl<'ctx> Gen<'ctx, '_> {
    pub(super) fn index(&mut self, n: &Arc<UOp>) -> R<()> {
        let buf = self.ptr(n.s(0))?;
        let Place::Buffer { guard } = self.guards.place(self.kernel, n)? else {
            self.define(n, buf);
            return Ok(());
        };
        let idx = self.int(n.s(1))?;
        let elem = self.storage_type(n, n.dtype().scalar_type())?;
        // SAFETY: one integer index into a scalar element type (no
        // aggregate), a GEP LLVM accepts for any index value. The address
        // is dereferenced only where lowering proved the index inside the
        // buffer (checked against the buffer sizes before the launch) or
        // behind the run-time guard built below.
        let p = unsafe { self.b.build_gep(elem, buf, &[idx], "") }.map_err(be)?;
        if let Some(slot) = guard {
            let span = self.elements_in_buffer(idx, 1, slot)?;
            self.guards.insert(n, span.ok);
        }
        self.define(n, p);
        Ok(())
    }

    pub(super) fn load(&mut self, n: &Arc<UOp>) -> R<()> {
        let index = n.s(0);
        let place = self.ptr(index)?;
        let st = self.scalar(n)?;
        let global = indexes_global(index);
        let vector = n.dtype().is_vector();
        let conds = self.guards.load(n, |gate| self.int(gate))?;
        let cond = match conds.as_slice() {
            [] => None,
            [c] => Some(*c),
            [a, b, ..] => Some(self.b.build_and(*a, *b, "").map_err(be)?),
        };
        let (then, merge, from) = match cond {
            None => (None, None, None),
            Some(c) => {
                let from = self
                    .b
                    .get_insert_block()
                    .ok_or_else(|| err(n, "no block"))?;
                let then = self.cx.append_basic_block(self.func, "load");
                let merge = self.cx.append_basic_block(self.func, "loaded");
                self.b
                    .build_conditional_branch(c, then, merge)
                    .map_err(be)?;
                self.b.position_at_end(then);
                (Some(then), Some(merge), Some(from))
            }
        };
        let (ty, align) = if vector && global {
            let (ty, align) = self.vector_access(n, n.dtype())?;
            (ty, Some(align))
        } else if vector {
            (self.dtype_type(n, n.dtype())?, None)
        } else if global {
            (self.storage_type(n, st)?, None)
        } else {
            (self.value_type(n, st)?, None)
        };
        if global {
            self.bounds_check(index, n.dtype().count())?;
        }
        let raw = self.b.build_load(ty, place, "").map_err(be)?;
        if let Some(align) = align {
            set_alignment(n, raw, align)?;
        }
        let v: BasicValueEnum<'ctx> = match st {
            _ if vector => raw,
            ScalarType::F16 if global => self.f16_to_f32(raw.into_int_value())?.into(),
            ScalarType::BF16 if global => self.bf16_to_f32(raw.into_int_value())?.into(),
            ScalarType::Bool if global => {
                let r = raw.into_int_value();
                self.b
                    .build_int_compare(IntPredicate::NE, r, r.get_type().const_zero(), "")
                    .map_err(be)?
                    .into()
            }
            _ => raw,
        };
        let v = match (then, merge, from) {
            (Some(_), Some(merge), Some(from)) => {
                let end = self
                    .b
                    .get_insert_block()
                    .ok_or_else(|| err(n, "no block"))?;
                self.b.build_unconditional_branch(merge).map_err(be)?;
                self.b.position_at_end(merge);
                let zero = if vector {
                    self.vector_constant(n, ConstValue::zero(st))?
                } else {
                    self.constant(n, ConstValue::zero(st), st)?
                };
                let phi = self.b.build_phi(v.get_type(), "").map_err(be)?;
                phi.add_incoming(&[(&v, end), (&zero, from)]);
                phi.as_basic_value()
            }
            _ => v,
        };
        self.define(n, v);
        Ok(())
    }

    pub(super) fn store(&mut self, n: &Arc<UOp>) -> R<()> {
        let index = n.s(0);
        let guard = self.guards.store(n)?;
        let place = self.ptr(index)?;
        let v = self.value(n.s(1))?;
        let global = indexes_global(index);
        if n.s(1).dtype().is_vector() {
            self.bounds_check(index, n.s(1).dtype().count())?;
            let st = self.b.build_store(place, v).map_err(be)?;
            if global {
                let (_, mut align) = self.vector_access(n, n.s(1).dtype())?;
                if self.may_stream && crate::cpu::stream::streams(self.kernel, n) {
                    // Proven aligned to the whole vector (the instruction
                    // faults otherwise); `!nontemporal !{i32 1}`.
                    align = n.s(1).dtype().itemsize() as u32;
                    let one = self.cx.i32_type().const_int(1, false);
                    let node = self.cx.metadata_node(&[one.into()]);
                    st.set_metadata(node, self.cx.get_kind_id("nontemporal"))
                        .map_err(|e| err(n, format!("nontemporal store: {e}")))?;
                    self.streamed = true;
                }
                st.set_alignment(align)
                    .map_err(|e| err(n, format!("store alignment: {e}")))?;
            }
            return Ok(());
        }
        let v: BasicValueEnum<'ctx> = match self.scalar(n.s(1))? {
            ScalarType::F16 if global => self.f32_to_f16(v.into_float_value())?.into(),
            ScalarType::BF16 if global => self.f32_to_bf16(v.into_float_value())?.into(),
            ScalarType::Bool if global => self
                .b
                .build_int_z_extend(v.into_int_value(), self.cx.i8_type(), "")
                .map_err(be)?
                .into(),
            _ => v,
        };
        match guard {
            Some(ok) => {
                let then = self.cx.append_basic_block(self.func, "store");
                let merge = self.cx.append_basic_block(self.func, "stored");
                self.b
                    .build_conditional_branch(ok, then, merge)
                    .map_err(be)?;
                self.b.position_at_end(then);
                self.bounds_check(index, 1)?;
                self.b.build_store(place, v).map_err(be)?;
                self.b.build_unconditional_branch(merge).map_err(be)?;
                self.b.position_at_end(merge);
            }
            None => {
                self.bounds_check(index, 1)?;
                self.b.build_store(place, v).map_err(be)?;
            }
        }
        Ok(())
    }
}

/// Sets the alignment of the load `v` (vector accesses assume only the
/// element's alignment).
fn set_alignment(n: &UOp, v: BasicValueEnum<'_>, align: u32) -> R<()> {
    v.as_instruction_value()
        .ok_or_else(|| err(n, "a load that is not an instruction"))?
        .set_alignment(align)
        .map_err(|e| err(n, format!("load alignment: {e}")))
}
