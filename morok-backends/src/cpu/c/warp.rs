//! The warp instructions of the CUDA dialect.
//!
//! `SHUFFLE_XOR(x, o)` is `__shfl_xor_sync` over the whole warp (lowering
//! uses it only in blocks of whole warps, where every lane runs it);
//! integers narrower than 32 bits travel as `int32_t`.
//!
//! `WMMA`: a warp's tensor-core product as one inline-PTX
//! `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`.
//! A thread's four `WMMA` nodes that share their twelve fragment operands
//! (the four elements of its `D` fragment, see the optimizer's `TC`) are
//! one instruction: the first one rendered declares `float mmaK[4]` and
//! issues it, and each node is the element `mmaK[e]` it names. The halves
//! live in `float` registers (the C renderer's convention), so each pair
//! is packed into a 32-bit register from its bits, the element with the
//! lower index in the low half, as the instruction reads them. The
//! accumulator operand is zero: the reduce around the node adds the
//! products.

use super::render::{err, Ctx, Dialect};
use morok_core::int_bounds;
use morok_core::render::RenderError;
use morok_core::uop::UOp;
use morok_core::ScalarType;
use std::sync::Arc;

impl Ctx<'_> {
    /// Renders `SHUFFLE_XOR` node `n` (see the module docs).
    pub(super) fn shuffle_xor(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        if self.dialect != Dialect::Cuda {
            return Err(err(n, "warp shuffles exist only on GPU targets"));
        }
        let [x, offset] = [self.name(n.s(0))?, self.name(n.s(1))?];
        let ty = self.vtype(n)?;
        // Halves live in `float` registers: only narrow integers widen.
        let narrow = matches!(
            n.dtype().scalar_type(),
            ScalarType::Bool | ScalarType::I8 | ScalarType::I16 | ScalarType::U8 | ScalarType::U16
        );
        let e = if narrow {
            format!("({ty})__shfl_xor_sync(0xffffffffu, (int32_t){x}, {offset})")
        } else {
            format!("__shfl_xor_sync(0xffffffffu, {x}, {offset})")
        };
        self.define(n, e)
    }

    /// Renders `WMMA` node `n` (see the module docs).
    pub(super) fn wmma(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        if self.dialect != Dialect::Cuda {
            return Err(err(n, "tensor cores exist only on GPU targets"));
        }
        // A constant once the lanes are expanded (vectorized lanes leave
        // it as arithmetic of constants).
        let element = match int_bounds(n.s(12)) {
            Some((lo, hi)) if lo == hi && (0..4).contains(&lo) => lo,
            _ => return Err(err(n, "WMMA element is not a constant of 0..4")),
        };
        let key: Vec<u64> = n.src()[..12].iter().map(|s| s.id()).collect();
        let array = match self.wmma_issued.get(&key) {
            Some(a) => a.clone(),
            None => {
                let (ptx, bits) = match n.s(0).dtype().scalar_type() {
                    ScalarType::F16 => ("f16", "morok_f32_to_f16"),
                    ScalarType::BF16 => ("bf16", "morok_f32_to_bf16"),
                    _ => return Err(err(n, "WMMA operands are not halves")),
                };
                let ops = self.operands(n, None)?;
                let pack = |i: usize| {
                    format!(
                        "\"r\"((uint32_t){bits}({}) | ((uint32_t){bits}({}) << 16))",
                        ops[i],
                        ops[i + 1]
                    )
                };
                let inputs: Vec<String> = (0..12).step_by(2).map(pack).collect();
                let array = self.fresh("mma");
                self.line(&format!("float {array}[4];"));
                self.line(&format!(
                    "asm(\"mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32 \
                     {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};\" \
                     : \"=f\"({array}[0]), \"=f\"({array}[1]), \"=f\"({array}[2]), \"=f\"({array}[3]) \
                     : {}, \"f\"(0.0f), \"f\"(0.0f), \"f\"(0.0f), \"f\"(0.0f));",
                    inputs.join(", ")
                ));
                self.wmma_issued.insert(key, array.clone());
                array
            }
        };
        self.names.insert(n.id(), format!("{array}[{element}]"));
        Ok(())
    }
}
