//! The in-process linker: an ORC `LLJIT` instance that object files are
//! added to and symbols looked up in (through the C API; inkwell wraps
//! only the older execution engines, which cannot load object code from
//! a cache).
//!
//! All kernels of one codegen live in the JIT's main library; their
//! symbols are unique (the kernel name plus its cache key, see
//! [`super::LlvmCodegen`]), and the process's own symbols (libm's `fmod`
//! for `frem`, for instance) resolve through a search generator. Each
//! object is added under a resource tracker of its own ([`Linked`]):
//! dropping the last handle to a kernel's code removes the object from
//! the JIT and frees its memory, so evicted kernels and beam candidates do
//! not accumulate.

use inkwell::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcDisposeLLJIT,
    LLVMOrcLLJITAddObjectFileWithRT, LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib,
    LLVMOrcLLJITLookup, LLVMOrcLLJITRef,
};
use inkwell::llvm_sys::orc2::{
    LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess, LLVMOrcJITDylibAddGenerator,
    LLVMOrcJITDylibCreateResourceTracker, LLVMOrcReleaseResourceTracker, LLVMOrcResourceTrackerRef,
    LLVMOrcResourceTrackerRemove,
};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Takes an LLVM error: `Ok` for none, else its message (consumed).
fn check(e: LLVMErrorRef) -> Result<(), String> {
    if e.is_null() {
        return Ok(());
    }
    // SAFETY: `e` is a live error; getting its message consumes it, and
    // the message is disposed after being copied.
    unsafe {
        let msg = LLVMGetErrorMessage(e);
        let s = CStr::from_ptr(msg).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(msg);
        Err(s)
    }
}

/// An ORC JIT owning the code of every object added to it.
pub struct Jit {
    /// The JIT, behind a lock: adding an object and looking its symbol up
    /// is one critical section (ORC is thread-safe, the lock keeps the
    /// pair atomic and the wrapper simple).
    inner: Mutex<LLVMOrcLLJITRef>,
    /// Objects linked and not yet removed.
    linked: AtomicUsize,
}

// SAFETY: the LLJIT handle is only used under the mutex, and LLJIT itself
// may be used from any thread.
unsafe impl Send for Jit {}
// SAFETY: as above; `&Jit` only reaches the handle through the mutex.
unsafe impl Sync for Jit {}

impl Jit {
    /// A JIT for the host, resolving undefined symbols in this process.
    pub fn new() -> Result<Jit, String> {
        let mut jit: LLVMOrcLLJITRef = std::ptr::null_mut();
        // SAFETY: the builder is consumed by `LLVMOrcCreateLLJIT`; on
        // success `jit` is a live instance, disposed on error below or in
        // `Drop`. The generator is owned by the library once added.
        unsafe {
            check(LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()))?;
            let mut generator = std::ptr::null_mut();
            let prefix = LLVMOrcLLJITGetGlobalPrefix(jit);
            if let Err(e) = check(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut generator,
                prefix,
                None,
                std::ptr::null_mut(),
            )) {
                let _ = check(LLVMOrcDisposeLLJIT(jit));
                return Err(e);
            }
            LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), generator);
        }
        Ok(Jit {
            inner: Mutex::new(jit),
            linked: AtomicUsize::new(0),
        })
    }

    /// Links `object` into the JIT under a resource tracker of its own
    /// and returns the address of `symbol` (defined by it) with the handle
    /// that keeps the code mapped. A symbol already defined is an error.
    pub fn add_and_lookup(self: &Arc<Self>, object: &[u8], symbol: &str) -> Result<Linked, String> {
        let name = CString::new(symbol).map_err(|e| e.to_string())?;
        let jit = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut addr: u64 = 0;
        // SAFETY: `*jit` is live (owned by `self`); the tracker belongs to
        // its main library and is released on every path (by `Linked`'s
        // drop once linked, here on failure); the memory buffer is a copy
        // of `object` whose ownership passes to the JIT; `name` is a
        // NUL-terminated string outliving the calls.
        unsafe {
            let tracker = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(*jit));
            let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                object.as_ptr().cast(),
                object.len(),
                name.as_ptr(),
            );
            let linked = check(LLVMOrcLLJITAddObjectFileWithRT(*jit, tracker, buf))
                .and_then(|()| check(LLVMOrcLLJITLookup(*jit, &mut addr, name.as_ptr())));
            if let Err(e) = linked {
                let _ = check(LLVMOrcResourceTrackerRemove(tracker));
                LLVMOrcReleaseResourceTracker(tracker);
                return Err(e);
            }
            if addr == 0 {
                let _ = check(LLVMOrcResourceTrackerRemove(tracker));
                LLVMOrcReleaseResourceTracker(tracker);
                return Err(format!("symbol `{symbol}` resolved to null"));
            }
            self.linked.fetch_add(1, Ordering::Relaxed);
            Ok(Linked {
                jit: self.clone(),
                tracker,
                addr: addr as usize,
            })
        }
    }

    /// How many objects are linked now (added and not yet removed).
    pub fn linked(&self) -> usize {
        self.linked.load(Ordering::Relaxed)
    }
}

/// One object's code in the JIT: the address of its symbol, valid while
/// this lives; dropping it removes the object and frees its memory.
pub struct Linked {
    jit: Arc<Jit>,
    tracker: LLVMOrcResourceTrackerRef,
    addr: usize,
}

// SAFETY: the tracker is only used in `drop`, under the JIT's mutex.
unsafe impl Send for Linked {}
// SAFETY: `&Linked` exposes only the address.
unsafe impl Sync for Linked {}

impl Linked {
    /// The symbol's address.
    pub fn addr(&self) -> usize {
        self.addr
    }
}

impl Drop for Linked {
    fn drop(&mut self) {
        let _jit = self.jit.inner.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the tracker is live and released once; no caller runs
        // the code any more (every kernel holds this handle while it may
        // call `addr`).
        unsafe {
            let _ = check(LLVMOrcResourceTrackerRemove(self.tracker));
            LLVMOrcReleaseResourceTracker(self.tracker);
        }
        self.jit.linked.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        let jit = *self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the handle is live and dropped once; no kernel of this
        // JIT runs any more (each kernel's `Linked` holds an `Arc` to it).
        let _ = check(unsafe { LLVMOrcDisposeLLJIT(jit) });
    }
}
