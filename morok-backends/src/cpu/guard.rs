//! Run-time bounds guards, shared by the C and LLVM renderers.
//!
//! Lowering proves most accesses in bounds before a launch
//! (`BufferSlot::access`); the ones it cannot (data-dependent offsets,
//! [`LoweredKernel::guarded`]) are checked when they execute: a guarded
//! load reads 0 outside `0..sizes[slot]`, a guarded store is dropped. This
//! module decides everything about those guards that does not depend on
//! the output language: which INDEX nodes get one and against which
//! slot's size, the order in which a load's gate and guard combine, and
//! which accesses cannot be guarded (vector accesses, gated stores, which
//! lowering never produces). A renderer only builds the condition
//! `0 <= idx && idx < sizes[slot]` in its own form (a C expression, an
//! LLVM `i1`) and branches or selects on what [`Guards`] hands back.

use morok_core::render::RenderError;
use morok_core::uop::{Arg, Op, UOp};
use morok_core::LoweredKernel;
use std::collections::HashMap;
use std::sync::Arc;

/// What an INDEX node addresses.
pub(crate) enum Place {
    /// A register (`DEFINE_REG`): it holds one element, the index is 0.
    Register,
    /// An element of a global buffer; `guard` is the `DEFINE_GLOBAL` slot
    /// whose size the index is checked against at run time, for the
    /// accesses lowering marked as guarded.
    Buffer {
        /// The slot to check the index against, if the access is guarded.
        guard: Option<u64>,
    },
}

/// The buffer or register an INDEX node `n` addresses (its first operand
/// without the `AFTER` wrappers that order it after other stores).
fn index_base(n: &Arc<UOp>) -> &Arc<UOp> {
    let mut base = n.s(0);
    while base.op() == Op::After {
        base = base.s(0);
    }
    base
}

/// The bounds conditions of one kernel's guarded accesses, by INDEX node,
/// in the renderer's form `C`.
pub(crate) struct Guards<C> {
    renderer: &'static str,
    by_index: HashMap<u64, C>,
}

impl<C: Clone> Guards<C> {
    /// No guards yet; errors name `renderer`.
    pub(crate) fn new(renderer: &'static str) -> Guards<C> {
        Guards {
            renderer,
            by_index: HashMap::new(),
        }
    }

    fn err(&self, n: &UOp, what: &str) -> RenderError {
        RenderError {
            renderer: self.renderer.to_string(),
            node: format!("{n:?}"),
            what: what.to_string(),
        }
    }

    /// What the INDEX node `n` of `kernel` addresses: a register (whose
    /// index must be 0) or a buffer element, with the slot to guard it
    /// against when lowering marked it as guarded.
    pub(crate) fn place(&self, kernel: &LoweredKernel, n: &Arc<UOp>) -> Result<Place, RenderError> {
        let base = index_base(n);
        if base.op() == Op::DefineReg {
            if !n.s(1).is_zero_const() {
                return Err(self.err(n, "registers hold one element"));
            }
            return Ok(Place::Register);
        }
        if !kernel.guarded.contains(&n.id()) {
            return Ok(Place::Buffer { guard: None });
        }
        match *base.arg() {
            Arg::Int(slot) => Ok(Place::Buffer {
                guard: Some(slot as u64),
            }),
            _ => Err(self.err(n, "DEFINE_GLOBAL without a slot")),
        }
    }

    /// Records the bounds condition `cond` of the guarded INDEX node `n`.
    pub(crate) fn insert(&mut self, n: &UOp, cond: C) {
        self.by_index.insert(n.id(), cond);
    }

    /// The conditions under which the LOAD `n` reads memory (it yields 0
    /// otherwise), in order: the index's gate (its third operand, as
    /// `gate` renders it) first, since it may be what keeps the index in
    /// range, then the index's bounds guard. A vector load cannot be
    /// guarded.
    pub(crate) fn load(
        &self,
        n: &Arc<UOp>,
        gate: impl FnOnce(&Arc<UOp>) -> Result<C, RenderError>,
    ) -> Result<Vec<C>, RenderError> {
        let index = n.s(0);
        let guard = self.by_index.get(&index.id());
        if n.dtype().is_vector() && guard.is_some() {
            return Err(self.err(n, "vector load through a guarded index"));
        }
        let mut conds = Vec::with_capacity(2);
        if let Some(g) = index.src().get(2) {
            conds.push(gate(g)?);
        }
        conds.extend(guard.cloned());
        Ok(conds)
    }

    /// The bounds guard of the STORE `n` (the store happens only where it
    /// holds), if its index has one. Stores carry no gate (lowering turns
    /// them into `IF`s) and a vector store cannot be guarded.
    pub(crate) fn store(&self, n: &Arc<UOp>) -> Result<Option<C>, RenderError> {
        let index = n.s(0);
        if index.src().len() > 2 {
            return Err(self.err(n, "gated stores must be lowered to IF"));
        }
        let guard = self.by_index.get(&index.id());
        if n.s(1).dtype().is_vector() && guard.is_some() {
            return Err(self.err(n, "vector store through a guarded index"));
        }
        Ok(guard.cloned())
    }
}
