//! Host memory buffers: 64-byte aligned (a cache line and the widest
//! vector register), recycled through a process-wide pool.
//!
//! A fresh buffer's contents are unspecified (its users write every
//! element before reading one), but always initialized bytes: new memory
//! comes zeroed, and a buffer freed by its last user returns to the pool
//! and is handed out again as it is. Reusing memory avoids the page faults
//! and zeroing of a fresh multi-megabyte allocation on every realization
//! (most of an elementwise kernel's time otherwise).
//! Debug builds fill every buffer they hand out with `0xFF` bytes (NaN for
//! floats, −1 for signed integers), so a kernel that reads memory nothing
//! wrote, or leaves part of its output unwritten, fails the tests.
//!
//! **Large buffers** (Linux, at least [`MAP_THRESHOLD`] bytes) are mapped
//! straight from the kernel (`mmap`) instead of the allocator: an anonymous
//! mapping is zero without a pass over it (the allocator's zeroed 64-byte
//! aligned allocation writes every byte, tens of milliseconds for a 64 MiB
//! output), and its pages are faulted in by the first kernel that writes
//! them. Those of at least [`HUGE_PAGE`] bytes start on a 2 MiB boundary,
//! so transparent huge pages can back them (in the kernel's `always` mode,
//! or in `madvise` mode when advised with `MADV_HUGEPAGE`). Huge pages make
//! streams faster (the hardware prefetchers stop at page boundaries, and a
//! strided walk misses the TLB on every 4 KiB page: two threads summing a
//! 64 MiB array took about 1.5 ms instead of 2.5–3 ms on the Zen 4 test
//! machine), but under a hypervisor that reclaims freed memory (free page
//! reporting, as on that machine) the first touch of a fresh huge page can
//! cost far more than of small pages: writing a fresh 64 MiB mapping took
//! 40–310 ms with huge pages against 80–160 ms without. So which buffers
//! are advised is a policy ([`HugePages`], `MOROK_HUGE_PAGES`): by default
//! only **uploads** — a fresh mapping whose first write is a whole-buffer
//! [`DeviceBuffer::copy_in`] of host data. Their first touch is the copy
//! itself (outside any kernel, where the cost is no worse than the copy's
//! own page faults on average), they are typically read many times
//! (weights, inputs), and once advised the memory stays huge through the
//! pool, so kernel outputs that reuse it stream faster too. Kernel outputs
//! that need fresh memory keep small pages, so a first call pays no
//! huge-page faults inside its kernels.

use morok_core::device::{DeviceBuffer, DeviceError, DeviceResult};
use morok_core::dtype::DType;
use std::alloc::Layout;
use std::any::Any;
use std::collections::VecDeque;
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
    /// True for new memory (not reused from the pool) until the first
    /// `copy_in`, which may then advise it as huge pages (see the module
    /// docs).
    fresh: bool,
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
        let (ptr, fresh) = pool_take(layout).ok_or_else(|| fail("out of memory"))?;
        if cfg!(debug_assertions) {
            // SAFETY: `ptr` holds `layout.size()` bytes owned by us.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0xFF, layout.size()) };
        }
        Ok(CpuBuffer {
            ptr,
            layout,
            dtype,
            len,
            fresh,
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

/// Freed allocations (all aligned to [`ALIGN`]), least recently freed
/// first, with their sizes.
#[derive(Default)]
struct Pool {
    free: VecDeque<(usize, Block)>,
    bytes: usize,
}

impl Pool {
    /// The most recently freed block of `size` bytes (the pool holds few
    /// blocks: a linear scan from the back).
    fn take(&mut self, size: usize) -> Option<Block> {
        let at = self.free.iter().rposition(|(s, _)| *s == size)?;
        let (_, block) = self.free.remove(at)?;
        self.bytes -= size;
        Some(block)
    }

    /// Keeps `block` of `size` bytes (at most `limit`) as the most recently
    /// freed one; returns the least recently freed blocks that had to
    /// leave to keep the pool within `limit` bytes.
    fn put(&mut self, size: usize, block: Block, limit: usize) -> Vec<(usize, Block)> {
        let mut evicted = Vec::new();
        while self.bytes + size > limit {
            let Some((s, old)) = self.free.pop_front() else {
                break;
            };
            self.bytes -= s;
            evicted.push((s, old));
        }
        self.bytes += size;
        self.free.push_back((size, block));
        evicted
    }
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

/// Bytes of freed CPU buffers the pool holds for reuse now (at most
/// 256 MiB).
pub fn pooled_bytes() -> usize {
    with_pool(|p| p.bytes)
}

fn with_pool<R>(f: impl FnOnce(&mut Pool) -> R) -> R {
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Pool::default))
}

/// Memory for `layout`: a pooled block of the same size, or a new zeroed
/// allocation; when that fails, the pool is released and it is tried once
/// more. `None` when the system is out of memory; else the memory and
/// whether it is new (not from the pool).
fn pool_take(layout: Layout) -> Option<(NonNull<u8>, bool)> {
    let size = layout.size();
    if let Some(block) = with_pool(|p| p.take(size)) {
        return Some((block.0, false));
    }
    system::alloc_zeroed(layout)
        .or_else(|| {
            release_pool();
            system::alloc_zeroed(layout)
        })
        .map(|p| (p, true))
}

/// Returns `ptr` (allocated for `layout`) to the pool. When the pool
/// would hold more than [`POOL_LIMIT`] bytes, the least recently freed
/// blocks go back to the system first (a block larger than the limit
/// itself goes back at once): a program that moves on to tensors of other
/// sizes keeps recycling its current ones instead of mapping and faulting
/// fresh memory on every call.
fn pool_give(ptr: NonNull<u8>, layout: Layout) {
    let size = layout.size();
    if size > POOL_LIMIT {
        // SAFETY: allocated by `pool_take` with exactly this layout.
        unsafe { system::dealloc(ptr, layout) };
        return;
    }
    let evicted = with_pool(|p| p.put(size, Block(ptr), POOL_LIMIT));
    for (s, block) in evicted {
        free_block(s, block);
    }
}

/// Frees a pooled block of `size` bytes.
fn free_block(size: usize, block: Block) {
    // The layout every block of this size was allocated with.
    if let Ok(layout) = Layout::from_size_align(size, ALIGN) {
        // SAFETY: allocated by `pool_take` with this layout.
        unsafe { system::dealloc(block.0, layout) }
    }
}

/// Frees every pooled block.
fn release_pool() {
    let pool = with_pool(std::mem::take);
    for (size, block) in pool.free {
        free_block(size, block);
    }
}

/// Buffers of at least this many bytes are mapped from the kernel on
/// Linux (see the module docs); smaller ones come from the allocator.
pub const MAP_THRESHOLD: usize = 1 << 20;

/// Buffers of at least this many bytes (the x86-64 and AArch64 huge page
/// size) are aligned to it on Linux, and advised as huge pages as
/// [`huge_pages`] says.
pub const HUGE_PAGE: usize = 2 << 20;

/// Which large buffers are advised as huge pages (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugePages {
    /// None (`MOROK_HUGE_PAGES=0`).
    Never,
    /// New mappings first written by a whole-buffer upload (the default).
    Uploads,
    /// Every new mapping, when it is made (`MOROK_HUGE_PAGES=1`).
    All,
}

/// The huge page policy: `MOROK_HUGE_PAGES`, read once per process.
pub fn huge_pages() -> HugePages {
    static POLICY: std::sync::OnceLock<HugePages> = std::sync::OnceLock::new();
    *POLICY.get_or_init(|| {
        crate::settings::env_setting("MOROK_HUGE_PAGES", "0 or 1", huge_pages_setting)
            .unwrap_or(HugePages::Uploads)
    })
}

/// The meaning of a `MOROK_HUGE_PAGES` value: `0` never, `1` every large
/// buffer; unset means uploads only, and any other value is refused.
fn huge_pages_setting(value: &str) -> Option<HugePages> {
    match value {
        "0" => Some(HugePages::Never),
        "1" => Some(HugePages::All),
        _ => None,
    }
}

/// Where new memory comes from: zeroed allocations and their release,
/// chosen by size alone (so a block's size says how to free it).
mod system {
    use std::alloc::Layout;
    use std::ptr::NonNull;

    /// True if a block of `size` bytes is an anonymous mapping.
    pub(super) fn mapped(size: usize) -> bool {
        cfg!(target_os = "linux") && size >= super::MAP_THRESHOLD
    }

    /// True if a block of `size` bytes is aligned to [`super::HUGE_PAGE`]
    /// (and advised as huge pages when they are requested).
    pub(super) fn huge(size: usize) -> bool {
        mapped(size) && size >= super::HUGE_PAGE
    }

    /// New zeroed memory for `layout` (non-zero size); `None` when the
    /// system has none.
    pub(super) fn alloc_zeroed(layout: Layout) -> Option<NonNull<u8>> {
        let size = layout.size();
        if mapped(size) {
            let advise = super::huge_pages() == super::HugePages::All;
            return map(size, huge(size), advise);
        }
        // SAFETY: the layout has a non-zero size.
        NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
    }

    /// Frees `ptr`.
    ///
    /// # Safety
    /// `ptr` came from [`alloc_zeroed`] with `layout` and is not used again.
    pub(super) unsafe fn dealloc(ptr: NonNull<u8>, layout: Layout) {
        if mapped(layout.size()) {
            // SAFETY: mapped by `map` for this size (the caller's contract).
            unsafe { unmap(ptr, layout.size()) };
            return;
        }
        // SAFETY: allocated by `std::alloc::alloc_zeroed` with `layout`.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) }
    }

    /// `size` rounded up to whole 4 KiB pages: the length of its mapping.
    #[cfg(target_os = "linux")]
    fn page_round(size: usize) -> usize {
        size.div_ceil(4096) * 4096
    }

    /// Unmaps a block [`map`] made for `size` bytes.
    ///
    /// # Safety
    /// `ptr` came from `map(size, _)` and is not used again.
    #[cfg(target_os = "linux")]
    unsafe fn unmap(ptr: NonNull<u8>, size: usize) {
        // SAFETY: `map` mapped exactly `page_round(size)` bytes at `ptr`.
        unsafe { libc::munmap(ptr.as_ptr().cast(), page_round(size)) };
    }

    /// Elsewhere nothing is mapped ([`mapped`] is false).
    #[cfg(not(target_os = "linux"))]
    unsafe fn unmap(_ptr: NonNull<u8>, _size: usize) {}

    /// Advises the `size` bytes at `ptr` (a block of that size from
    /// [`alloc_zeroed`] for which [`huge`] holds) as huge pages: pages
    /// faulted in from now on are huge. Advice is a hint; its failure
    /// leaves ordinary pages.
    #[cfg(target_os = "linux")]
    pub(super) fn advise_huge(ptr: NonNull<u8>, size: usize) {
        // SAFETY: `ptr` starts a mapping of `page_round(size)` bytes;
        // advice changes no contents.
        unsafe {
            libc::madvise(ptr.as_ptr().cast(), page_round(size), libc::MADV_HUGEPAGE);
        }
    }

    /// Elsewhere nothing is mapped ([`huge`] is false).
    #[cfg(not(target_os = "linux"))]
    pub(super) fn advise_huge(_ptr: NonNull<u8>, _size: usize) {}

    /// Elsewhere nothing is mapped ([`mapped`] is false).
    #[cfg(not(target_os = "linux"))]
    pub(super) fn map(_size: usize, _huge: bool, _advise: bool) -> Option<NonNull<u8>> {
        None
    }

    /// An anonymous private mapping of `size` bytes (zero-filled by the
    /// kernel). A `huge` one is carved out of a mapping one huge page
    /// longer, the unaligned head and the tail unmapped, so it starts on a
    /// huge page boundary, then with `advise` advised as huge pages (advice
    /// is a hint: its failure leaves ordinary pages).
    #[cfg(target_os = "linux")]
    pub(super) fn map(size: usize, huge: bool, advise: bool) -> Option<NonNull<u8>> {
        let len = page_round(size);
        let extra = if huge { super::HUGE_PAGE } else { 0 };
        let total = len.checked_add(extra)?;
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let start = raw as usize;
        let aligned = if extra == 0 {
            start
        } else {
            start.next_multiple_of(super::HUGE_PAGE)
        };
        let head = aligned - start;
        let tail = total - head - len;
        // SAFETY: both ranges lie inside the mapping just made, outside
        // [aligned, aligned + len), and are page-aligned (mmap returns
        // page-aligned memory; `len` and the huge page are page multiples).
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
            if extra > 0 && advise {
                libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
        NonNull::new(aligned as *mut u8)
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
        // An upload into new memory: the copy is its first touch (see the
        // module docs for why uploads get huge pages).
        if std::mem::take(&mut self.fresh)
            && huge_pages() == HugePages::Uploads
            && system::huge(self.layout.size())
        {
            system::advise_huge(self.ptr, self.layout.size());
        }
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
    fn a_full_pool_evicts_its_least_recently_freed_blocks() {
        // Fake addresses: the blocks are only compared, never touched.
        let block = |a: usize| Block(NonNull::new(a as *mut u8).unwrap());
        let addr = |b: &Block| b.0.as_ptr() as usize;
        let mut pool = Pool::default();
        assert!(pool.put(40, block(0x1000), 100).is_empty());
        assert!(pool.put(40, block(0x2000), 100).is_empty());
        // a third block of another size evicts the oldest one only
        let out = pool.put(30, block(0x3000), 100);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0, addr(&out[0].1)), (40, 0x1000));
        assert_eq!(pool.bytes, 70);
        // the newest block of a size is handed out first; others stay
        assert_eq!(pool.take(30).map(|b| addr(&b)), Some(0x3000));
        assert_eq!(pool.take(40).map(|b| addr(&b)), Some(0x2000));
        assert!(pool.take(40).is_none());
        assert_eq!(pool.bytes, 0);
    }

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

    /// New memory reads as zeros in release builds (the poison in debug
    /// builds), small and large; a large block is reused after its free,
    /// and one of at least a huge page starts on a huge page boundary.
    #[test]
    fn large_buffers_are_zeroed_reused_and_huge_page_aligned() {
        let fill = if cfg!(debug_assertions) { 0xFF } else { 0 };
        // sizes no other test allocates: below the mapping threshold, a
        // mapped one, a huge one with a partial last page
        for n in [
            MAP_THRESHOLD - 64,
            MAP_THRESHOLD + 4,
            3 * HUGE_PAGE + 4096 + 36,
        ] {
            let a = CpuBuffer::new(DType::U8, n).unwrap();
            let mut bytes = vec![1u8; n];
            a.copy_out(&mut bytes).unwrap();
            assert!(bytes.iter().all(|&v| v == fill), "size {n}");
            assert_eq!(a.as_ptr() as usize % ALIGN, 0);
            if system::huge(n) {
                assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0, "size {n}");
            }
            let mut a = a;
            a.copy_in(&vec![3u8; n]).unwrap();
            let first = a.as_ptr();
            drop(a);
            let b = CpuBuffer::new(DType::U8, n).unwrap();
            assert_eq!(b.as_ptr(), first, "size {n}");
        }
    }

    /// The `VmFlags` of the mapping holding `p`, from `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    fn vm_flags(p: *const u8) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let addr = p as usize;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| {
                let (lo, hi) = r.split_once('-')?;
                Some((
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                ))
            });
            if let Some((lo, hi)) = range {
                inside = (lo..hi).contains(&addr);
            } else if let Some(flags) = line.strip_prefix("VmFlags:") {
                if inside {
                    return flags.to_string();
                }
            }
        }
        panic!("no mapping holds {p:?}")
    }

    /// Under the default policy an upload into new memory is advised as
    /// huge pages (`hg` in the mapping's flags); new memory a kernel
    /// writes is not.
    #[cfg(target_os = "linux")]
    #[test]
    fn uploads_get_huge_pages_and_kernel_outputs_do_not() {
        let policy = huge_pages();
        // sizes no other test allocates
        let n = 4 * HUGE_PAGE + 8192;
        let mut up = CpuBuffer::new(DType::U8, n).unwrap();
        up.copy_in(&vec![5u8; n]).unwrap();
        let out = CpuBuffer::new(DType::U8, n + 4096).unwrap();
        let advised = |b: &CpuBuffer| vm_flags(b.as_ptr()).split_whitespace().any(|f| f == "hg");
        assert_eq!(advised(&up), policy != HugePages::Never);
        assert_eq!(advised(&out), policy == HugePages::All);
        let mut bytes = vec![0u8; n];
        up.copy_out(&mut bytes).unwrap();
        assert!(bytes.iter().all(|&b| b == 5));
    }

    #[test]
    fn the_size_decides_mapping_and_huge_pages() {
        let linux = cfg!(target_os = "linux");
        assert!(!system::mapped(MAP_THRESHOLD - 1));
        assert_eq!(system::mapped(MAP_THRESHOLD), linux);
        assert!(!system::huge(HUGE_PAGE - 1));
        assert_eq!(system::huge(HUGE_PAGE), linux);
        assert_eq!(system::huge(64 << 20), linux);
        // both kinds of huge mapping: aligned, zero, unmapped by size
        if linux {
            for advise in [false, true] {
                let size = 5 * HUGE_PAGE + 100;
                let p = system::map(size, true, advise).unwrap();
                assert_eq!(p.as_ptr() as usize % HUGE_PAGE, 0);
                // SAFETY: `size` bytes were just mapped, readable and writable.
                let bytes = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) };
                assert!(bytes.iter().all(|&b| b == 0));
                bytes[size - 1] = 1;
                let layout = Layout::from_size_align(size, ALIGN).unwrap();
                // SAFETY: mapped above for this size (`mapped(size)` holds).
                unsafe { system::dealloc(p, layout) };
            }
        }
        assert_eq!(huge_pages_setting("1"), Some(HugePages::All));
        assert_eq!(huge_pages_setting("0"), Some(HugePages::Never));
        assert_eq!(huge_pages_setting("uploads"), None);
    }
}
