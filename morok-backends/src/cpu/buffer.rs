//! Host memory buffers: 64-byte aligned (a cache line and the widest
//! vector register), recycled through a process-wide pool.
//!
//! A fresh buffer's contents are unspecified (its users write every
//! element before reading one), but always initialized bytes: new memory
//! comes zeroed from the allocator, and a buffer freed by its last user
//! returns to the pool and is handed out again as it is. Reusing memory
//! avoids the page faults and zeroing of a fresh multi-megabyte allocation
//! on every realization (most of an elementwise kernel's time otherwise).
//! Debug builds fill every buffer they hand out with `0xFF` bytes (NaN for
//! floats, −1 for signed integers), so a kernel that reads memory nothing
//! wrote, or leaves part of its output unwritten, fails the tests.

use morok_core::device::{DeviceBuffer, DeviceError, DeviceResult};
use morok_core::dtype::DType;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::any::Any;
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

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
    /// Allocates `len` elements of `dtype` (contents unspecified, see the
    /// module docs).
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
        let ptr = pool_take(layout).ok_or_else(|| fail("out of memory"))?;
        if cfg!(debug_assertions) {
            // SAFETY: `ptr` holds `layout.size()` bytes owned by us.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0xFF, layout.size()) };
        }
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
        pool_give(self.ptr, self.layout);
    }
}

/// Bytes the pool may hold in freed buffers; beyond it freed memory goes
/// back to the system allocator.
const POOL_LIMIT: usize = 256 << 20;

/// An allocation owned by the pool.
struct Block(NonNull<u8>);

// SAFETY: a block is plain memory nobody else references.
unsafe impl Send for Block {}

/// Freed allocations by size (all aligned to [`ALIGN`]).
#[derive(Default)]
struct Pool {
    free: HashMap<usize, Vec<Block>>,
    bytes: usize,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn with_pool<R>(f: impl FnOnce(&mut Pool) -> R) -> R {
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Pool::default))
}

/// Memory for `layout`: a pooled block of the same size, or a new zeroed
/// allocation; when that fails, the pool is released and it is tried once
/// more. `None` when the system is out of memory.
fn pool_take(layout: Layout) -> Option<NonNull<u8>> {
    let size = layout.size();
    let reused = with_pool(|p| {
        let block = p.free.get_mut(&size)?.pop()?;
        p.bytes -= size;
        Some(block.0)
    });
    if reused.is_some() {
        return reused;
    }
    // SAFETY: the layout has a non-zero size.
    NonNull::new(unsafe { alloc_zeroed(layout) }).or_else(|| {
        release_pool();
        // SAFETY: as above.
        NonNull::new(unsafe { alloc_zeroed(layout) })
    })
}

/// Returns `ptr` (allocated for `layout`) to the pool, or to the system
/// when the pool is full.
fn pool_give(ptr: NonNull<u8>, layout: Layout) {
    let size = layout.size();
    let kept = with_pool(|p| {
        if p.bytes + size > POOL_LIMIT {
            return false;
        }
        p.bytes += size;
        p.free.entry(size).or_default().push(Block(ptr));
        true
    });
    if !kept {
        // SAFETY: allocated by `pool_take` with exactly this layout.
        unsafe { dealloc(ptr.as_ptr(), layout) }
    }
}

/// Frees every pooled block.
fn release_pool() {
    let blocks = with_pool(std::mem::take);
    for (size, list) in blocks.free {
        // The layout every block of this size was allocated with.
        let Ok(layout) = Layout::from_size_align(size, ALIGN) else {
            continue;
        };
        for block in list {
            // SAFETY: allocated by `pool_take` with this layout.
            unsafe { dealloc(block.0.as_ptr(), layout) }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A freed buffer's memory is handed out again for the same size, and
    /// debug builds poison what they hand out.
    #[test]
    fn freed_memory_is_reused_and_poisoned_in_debug_builds() {
        // A size no other test allocates, so no other thread takes it.
        let n = 123_457;
        let mut a = CpuBuffer::new(DType::U8, n).unwrap();
        a.copy_in(&vec![7u8; n]).unwrap();
        let first = a.as_ptr();
        drop(a);
        let b = CpuBuffer::new(DType::U8, n).unwrap();
        assert_eq!(b.as_ptr(), first);
        let mut bytes = vec![0u8; n];
        b.copy_out(&mut bytes).unwrap();
        let expected = if cfg!(debug_assertions) { 0xFF } else { 7 };
        assert!(bytes.iter().all(|&v| v == expected));
    }
}
