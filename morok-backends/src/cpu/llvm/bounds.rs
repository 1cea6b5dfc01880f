//! Bounds assertions of the sanitizer mode (`MOROK_SANITIZE=1`) on the
//! LLVM device: before every load and store of a global buffer, the
//! elements it touches (`index .. index + lanes`) are checked against the
//! buffer's element count (`sizes[slot]`, the kernel ABI); outside it the
//! kernel prints which kernel, buffer, index and size to stderr and
//! aborts, like AddressSanitizer's report on the C device. The checks sit
//! under the access's gate, where the access really happens, so padded
//! or masked indices that are never read do not trip them. Without the
//! mode nothing is emitted: accesses are proven in bounds by lowering and
//! the launch checks.

use super::ir::{be, Gen, R};
use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::{AddressSpace, IntPredicate};
use morok_core::indexes_global;
use morok_core::uop::{Arg, UOp};
use std::sync::Arc;

/// The elements an access touches and whether they are in its buffer
/// ([`Gen::elements_in_buffer`]).
pub(super) struct Span<'ctx> {
    /// `0 <= first && last < size`.
    pub(super) ok: IntValue<'ctx>,
    /// The first element (`i64`).
    first: IntValue<'ctx>,
    /// The last element (`i64`).
    last: IntValue<'ctx>,
    /// The buffer's element count (`i64`).
    size: IntValue<'ctx>,
}

impl<'ctx> Gen<'ctx, '_> {
    /// Emits the check of an access through the global `INDEX` node
    /// `index` touching `lanes` consecutive elements (see the module doc);
    /// nothing outside the sanitizer mode, for other address spaces, or
    /// for an index that is not one integer (per-lane gathers).
    pub(super) fn bounds_check(&mut self, index: &Arc<UOp>, lanes: u16) -> R<()> {
        if !self.bounds_checks || !indexes_global(index) {
            return Ok(());
        }
        let Arg::Int(slot) = *index.s(0).arg() else {
            return Ok(());
        };
        let BasicValueEnum::IntValue(idx) = self.value(index.s(1))? else {
            return Ok(());
        };
        let cx = self.cx;
        let Span {
            ok,
            first,
            last,
            size,
        } = self.elements_in_buffer(idx, lanes, slot as u64)?;
        let fail = cx.append_basic_block(self.func, "out_of_bounds");
        let cont = cx.append_basic_block(self.func, "in_bounds");
        let b = &self.b;
        b.build_conditional_branch(ok, cont, fail).map_err(be)?;
        b.position_at_end(fail);
        let ptr = cx.ptr_type(AddressSpace::default());
        let i32t = cx.i32_type();
        // `dprintf` to stderr: unbuffered by the C library, so the report
        // is out before `abort`.
        let dprintf = self.libc_function("dprintf", i32t.fn_type(&[i32t.into(), ptr.into()], true));
        let abort = self.libc_function("abort", cx.void_type().fn_type(&[], false));
        let message = format!(
            "morok sanitize: kernel `{}` accesses elements %lld..=%lld of buffer {slot}, \
             which has %lld\n",
            self.kernel.name
        );
        let text = self
            .b
            .build_global_string_ptr(&message, "bounds_message")
            .map_err(be)?;
        let b = &self.b;
        b.build_call(
            dprintf,
            &[
                i32t.const_int(2, false).into(),
                text.as_pointer_value().into(),
                first.into(),
                last.into(),
                size.into(),
            ],
            "",
        )
        .map_err(be)?;
        b.build_call(abort, &[], "").map_err(be)?;
        b.build_unreachable().map_err(be)?;
        b.position_at_end(cont);
        Ok(())
    }

    /// Whether `lanes` elements from `idx` lie in buffer `slot`: `ok` is
    /// `0 <= first && last < size` with `first = idx` (sign-extended),
    /// `last = first + lanes - 1` and `size = sizes[slot]` (the kernel
    /// ABI). The run-time guard of data-dependent accesses (one element)
    /// and the sanitizer's assertions share it.
    pub(super) fn elements_in_buffer(
        &self,
        idx: IntValue<'ctx>,
        lanes: u16,
        slot: u64,
    ) -> R<Span<'ctx>> {
        let i64t = self.cx.i64_type();
        let sizes = self.param(1)?.into_pointer_value();
        let size = self.i64_load(sizes, slot, "size")?;
        let b = &self.b;
        let first = b
            .build_int_s_extend_or_bit_cast(idx, i64t, "")
            .map_err(be)?;
        let last = match lanes {
            0 | 1 => first,
            n => b
                .build_int_add(first, i64t.const_int(u64::from(n) - 1, false), "")
                .map_err(be)?,
        };
        let lo = b
            .build_int_compare(IntPredicate::SGE, first, i64t.const_zero(), "")
            .map_err(be)?;
        let hi = b
            .build_int_compare(IntPredicate::SLT, last, size, "")
            .map_err(be)?;
        let ok = b.build_and(lo, hi, "in_bounds").map_err(be)?;
        Ok(Span {
            ok,
            first,
            last,
            size,
        })
    }

    /// The C library's function `name` of type `ty`, declared once per
    /// module (the JIT resolves it in the process).
    fn libc_function(
        &self,
        name: &str,
        ty: inkwell::types::FunctionType<'ctx>,
    ) -> inkwell::values::FunctionValue<'ctx> {
        let module = self.module();
        module
            .get_function(name)
            .unwrap_or_else(|| module.add_function(name, ty, Some(Linkage::External)))
    }
}
