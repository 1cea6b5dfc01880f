//! Vector loads that the C renderer keeps in a register.
//!
//! A register tile multiplies each loaded vector by several broadcasts: a
//! convolution's row of input pixels feeds one FMA per output channel of
//! the tile. GCC 12, which knows no CPU newer than Zen 3, tunes a Zen 4
//! or Zen 5 host as `znver3`, a CPU without AVX-512, whose costs make a
//! 64-byte load as cheap as a 16-byte one; it then drops the loaded
//! register and folds the load into every FMA that uses it as a memory
//! operand. Each of those loads is unaligned (the tile's taps are shifted
//! by one pixel) and so reads two cache lines: a 4-channel tile of 56-wide
//! rows issued 28 line reads for 16 FMAs and ran at half the speed the
//! same C reached with `-mtune=generic` or Clang (16.9 ms against 8.4 ms
//! for W6's convolution on one core). Tuning the whole compile otherwise
//! changed other kernels (GCC's generic tuning splits unaligned 32-byte
//! loads: the column sums slowed by a quarter).
//!
//! So a vector load that is a multiplicand of two or more vector FMAs is
//! rendered into a variable pinned by an empty inline-assembly statement
//! (`MOROK_IN_REGISTER`: `__asm__("" : "+v"(x))` on x86-64 with AVX,
//! where every vector the renderer makes fits a register): the compiler
//! must hold it in a vector register from there on, so it loads it once.
//! The statement emits no instruction and the value is unchanged; other
//! targets get a no-op. AVX2 code folds the same way: the 6-row AVX2
//! matmul tile (W4a, AVX2 code on a Zen 5 host) issued 72 loads for 48
//! FMAs and took 12.8 ms; pinned, 9.8 ms.

use morok_core::indexes_global;
use morok_core::uop::Op;
use morok_core::LoweredKernel;
use std::collections::{HashMap, HashSet};

/// Defines `MOROK_IN_REGISTER(x)`: after it, `x` lives in a vector
/// register (GCC and Clang on x86-64 with AVX), a no-op elsewhere.
pub(crate) const IN_REGISTER_PRELUDE: &str =
    "#if defined(__x86_64__) && defined(__GNUC__) && defined(__AVX__)\n\
     #define MOROK_IN_REGISTER(x) __asm__(\"\" : \"+v\"(x))\n\
     #else\n\
     #define MOROK_IN_REGISTER(x) (void)(x)\n\
     #endif\n";

/// The ids of the vector loads of global buffers (ungated and not checked
/// at run time) that are a multiplicand of at least two vector `MULACC`s
/// of `kernel`: the loads to keep in a register.
pub(crate) fn shared_fma_loads(kernel: &LoweredKernel) -> HashSet<u64> {
    let mut uses: HashMap<u64, usize> = HashMap::new();
    for n in &kernel.ops {
        if n.op() == Op::MulAcc && n.dtype().is_vector() {
            for x in &n.src()[..2] {
                *uses.entry(x.id()).or_default() += 1;
            }
        }
    }
    kernel
        .ops
        .iter()
        .filter(|n| {
            n.op() == Op::Load
                && n.dtype().is_vector()
                && indexes_global(n.s(0))
                && n.s(0).src().len() == 2
                && !kernel.guarded.contains(&n.s(0).id())
                && uses.get(&n.id()).is_some_and(|&u| u >= 2)
        })
        .map(|n| n.id())
        .collect()
}
