//! Non-temporal ("streaming") stores: which vector stores of a kernel
//! bypass the cache, decided once for every CPU codegen (the C renderer
//! calls a streaming helper, the LLVM one marks the store `!nontemporal`).
//!
//! A store normally brings its cache line in first (a read of memory the
//! kernel is about to overwrite) and leaves it in the cache. A kernel
//! that writes an output larger than the cache gains nothing from either:
//! the lines are evicted before anything reads them again, and the
//! read-for-ownership costs a third of a copy's memory traffic (one core
//! copied 38.5 GB/s with streaming stores against 27.3 with ordinary ones
//! on the Zen 4 test machine). A streaming store writes the whole line to
//! memory without reading it.
//!
//! The rule ([`streams`]): a vector store to a global buffer streams when
//! - the vector is as wide as the host's vector registers (64 bytes with
//!   AVX-512, 32 with AVX2; kernels are compiled for the host's
//!   instruction set) and its elements are stored as they are computed
//!   (not `bool`, `f16` or `bf16`);
//! - its address is provably a multiple of the vector's size: buffers are
//!   64-byte aligned (`cpu/buffer.rs`) and the index, read as a linear
//!   form, has every coefficient and its constant divisible by the lane
//!   count (the instructions fault on an unaligned address);
//! - the range of elements the kernel writes in that buffer spans at
//!   least [`stream_threshold`] bytes, and the kernel takes no variables
//!   (whose ranges bound that span only at their largest values).
//!
//! Values are unchanged (only the cache policy differs). Streaming stores
//! are weakly ordered, so a kernel with one ends with a store fence
//! (`sfence`): every thread's part is visible once its call returns, as
//! the host expects when it joins the threads. Scalar tail stores stay
//! ordinary.

use morok_core::dtype::ScalarType;
use morok_core::indexes_global;
use morok_core::uop::{Arg, Op, UOp};
use morok_core::LoweredKernel;
use morok_core::{Expand, Linear};

/// The smallest extent, in bytes, of the elements a kernel writes in a
/// buffer for its vector stores to stream: half the last-level cache
/// ([`crate::host::l3_bytes`]; 16 MiB where it is not reported). From that size on the
/// output and the inputs it is computed from (as large, for the streaming
/// kernels this is for) no longer fit in the cache together.
pub fn stream_threshold() -> u64 {
    static THRESHOLD: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *THRESHOLD.get_or_init(|| {
        let l3 = crate::host::l3_bytes().map(|b| b as u64);
        l3.unwrap_or(32 << 20) / 2
    })
}

/// Whether the `STORE` `store` of `kernel` streams (the rule in the
/// module docs). Host-dependent: x86-64 with at least 32-byte vectors.
pub fn streams(kernel: &LoweredKernel, store: &UOp) -> bool {
    if store.op() != Op::Store || store.src().len() < 2 {
        return false;
    }
    let (index, value) = (store.s(0), store.s(1).dtype());
    let t = value.scalar_type();
    let host = crate::host::host_vector_bytes() as usize;
    if !cfg!(target_arch = "x86_64")
        || host < 32
        || !value.is_vector()
        || value.itemsize() != host
        || matches!(t, ScalarType::Bool | ScalarType::F16 | ScalarType::BF16)
        || index.op() != Op::Index
        || index.src().len() != 2
        || !indexes_global(index)
    {
        return false;
    }
    let mut base = index.s(0);
    while base.op() == Op::After {
        base = base.s(0);
    }
    let Arg::Int(slot) = *base.arg() else {
        return false;
    };
    // A kernel with variables (the DSL's generic kernels) serves every
    // value: its access ranges are bounds at the variables' largest values
    // and say nothing of a call's size. A batch of one writes a few lines,
    // which streaming would push to memory right before the next kernel
    // reads them.
    if kernel.ops.iter().any(|o| o.op() == Op::DefineVar) {
        return false;
    }
    let large = kernel
        .buffers
        .get(slot as usize)
        .and_then(|b| b.access)
        .is_some_and(|(lo, hi)| (hi - lo + 1) as u64 * t.itemsize() as u64 >= stream_threshold());
    let lanes = value.count() as i128;
    large
        && Linear::of(index.s(1), Expand::AddSubNegMul, 64)
            .is_some_and(|form| form.content() % lanes == 0)
}
