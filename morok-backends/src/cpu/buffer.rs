//! Host memory buffers: 64-byte aligned (a cache line and the widest
//! vector register), zero-initialised.

use morok_core::device::{DeviceBuffer, DeviceError, DeviceResult};
use morok_core::dtype::DType;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::any::Any;
use std::ptr::NonNull;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Alignment of every CPU buffer in bytes.
pub const ALIGN: usize = 64;

/// A buffer in host memory.
///
/// Kernels write through `&CpuBuffer` (the [`DeviceBuffer`] interface hands
/// out shared references), so access is arbitrated by an internal lock:
/// a kernel run holds it exclusively for the buffers it writes and shared
/// for those it only reads, and [`DeviceBuffer::copy_out`] holds it shared.
pub struct CpuBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
    dtype: DType,
    len: usize,
    lock: RwLock<()>,
}

// SAFETY: the buffer owns its allocation; every access through a shared
// reference takes `lock` (reads shared, writes exclusive).
unsafe impl Send for CpuBuffer {}
// SAFETY: see above.
unsafe impl Sync for CpuBuffer {}

impl CpuBuffer {
    /// Allocates `len` zeroed elements of `dtype`.
    pub fn new(dtype: DType, len: usize) -> DeviceResult<CpuBuffer> {
        let fail = |reason: &str| DeviceError::Alloc {
            dtype,
            count: len,
            reason: reason.to_string(),
        };
        if dtype.is_ptr() || dtype.itemsize() == 0 {
            return Err(fail("not a storable element type"));
        }
        let bytes = len
            .checked_mul(dtype.itemsize())
            .ok_or_else(|| fail("size overflows"))?;
        // A zero-sized allocation is not allowed; allocate one line instead.
        let layout = Layout::from_size_align(bytes.max(1), ALIGN)
            .map_err(|_| fail("size too large for an allocation"))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| fail("out of memory"))?;
        Ok(CpuBuffer {
            ptr,
            layout,
            dtype,
            len,
            lock: RwLock::new(()),
        })
    }

    /// The start of the data, for kernels.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Locks for reading (a poisoned lock only means a panic elsewhere;
    /// the bytes are still valid).
    pub(crate) fn read_lock(&self) -> RwLockReadGuard<'_, ()> {
        self.lock.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Locks for writing.
    pub(crate) fn write_lock(&self) -> RwLockWriteGuard<'_, ()> {
        self.lock.write().unwrap_or_else(|e| e.into_inner())
    }

    fn check_len(&self, n: usize, what: &str) -> DeviceResult<()> {
        if n != self.nbytes() {
            return Err(DeviceError::BadArgs {
                what: what.to_string(),
                reason: format!(
                    "{n} bytes given for a buffer of {} x {} ({} bytes)",
                    self.len,
                    self.dtype,
                    self.nbytes()
                ),
            });
        }
        Ok(())
    }
}

impl Drop for CpuBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl DeviceBuffer for CpuBuffer {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn len(&self) -> usize {
        self.len
    }

    fn copy_in(&mut self, bytes: &[u8]) -> DeviceResult<()> {
        self.check_len(bytes.len(), "copy into CPU buffer")?;
        // SAFETY: `&mut self` excludes every other access; the lengths match.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.as_ptr(), bytes.len()) };
        Ok(())
    }

    fn copy_out(&self, bytes: &mut [u8]) -> DeviceResult<()> {
        self.check_len(bytes.len(), "copy out of CPU buffer")?;
        let _guard = self.read_lock();
        // SAFETY: the read lock excludes writers; the lengths match.
        unsafe { std::ptr::copy_nonoverlapping(self.as_ptr(), bytes.as_mut_ptr(), bytes.len()) };
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
