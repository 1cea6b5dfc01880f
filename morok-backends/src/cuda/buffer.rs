//! CUDA device buffers and the LRU cache of freed device memory.
//!
//! A [`CudaBuffer`] owns one allocation of device memory (bytes, so one
//! pool serves every element type). Dropping it hands the allocation to
//! its device's [`BufferCache`], which keeps freed allocations by size
//! for the next buffer of the same size (no `cuMemAlloc` on a warm call)
//! up to a byte limit (`MOROK_CUDA_CACHE_BYTES`, default 1 GiB), freeing
//! the least recently freed ones past it.
//!
//! Copies in and out run on the device's stream; a copy out waits for
//! the stream (every launch before it has finished), which makes a
//! realize's read-back its one synchronization point. A copy between two
//! CUDA buffers ([`DeviceBuffer::copy_from`]) runs on the destination's
//! stream, device to device (`cuMemcpyPeerAsync` between two GPUs), after
//! the source's queued work.
//!
//! With `MOROK_CUDA_UNIFIED=1` the device allocates unified memory
//! (`cuMemAllocManaged`, attached globally): one address valid on the
//! host and on every GPU, migrated by the driver on demand; copies and
//! launches are the same.

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, UnifiedSlice};
use morok_core::device::{DeviceBuffer, DeviceError, DeviceResult};
use morok_core::DType;
use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Freed device memory kept for reuse (see the module doc).
pub struct BufferCache {
    /// Bytes the cache may hold.
    limit: usize,
    /// Freed allocations, least recently freed first.
    free: Mutex<FreeList>,
}

/// The allocations a [`BufferCache`] holds and their total size.
#[derive(Default)]
struct FreeList {
    slices: VecDeque<Memory>,
    bytes: usize,
}

/// One allocation: device memory, or unified memory (`MOROK_CUDA_UNIFIED`).
pub enum Memory {
    /// `cuMemAlloc`.
    Device(CudaSlice<u8>),
    /// `cuMemAllocManaged`, attached globally.
    Unified(UnifiedSlice<u8>),
}

impl Memory {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        match self {
            Memory::Device(s) => s.len(),
            Memory::Unified(s) => s.len(),
        }
    }

    /// True for an empty allocation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether `MOROK_CUDA_UNIFIED` asks for unified memory.
pub fn unified_from_env() -> bool {
    crate::settings::env_flag("MOROK_CUDA_UNIFIED")
}

impl BufferCache {
    /// A cache holding at most `limit` bytes.
    pub fn new(limit: usize) -> BufferCache {
        BufferCache {
            limit,
            free: Mutex::new(FreeList::default()),
        }
    }

    /// The byte limit from `MOROK_CUDA_CACHE_BYTES` (default 1 GiB).
    pub fn limit_from_env() -> usize {
        crate::settings::env_setting("MOROK_CUDA_CACHE_BYTES", "a number of bytes", |v| {
            v.parse::<usize>().ok()
        })
        .unwrap_or(1 << 30)
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }

    /// A freed allocation of exactly `bytes`, most recently freed first.
    fn take(&self, bytes: usize) -> Option<Memory> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let i = free.slices.iter().rposition(|s| s.len() == bytes)?;
        let slice = free.slices.remove(i)?;
        free.bytes -= bytes;
        Some(slice)
    }

    /// Keeps `slice` for reuse, freeing the least recently freed
    /// allocations while the cache holds more than its limit.
    fn put(&self, slice: Memory) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.bytes += slice.len();
        free.slices.push_back(slice);
        while free.bytes > self.limit {
            match free.slices.pop_front() {
                Some(old) => free.bytes -= old.len(),
                None => break,
            }
        }
    }

    /// Frees every cached allocation (after an allocation failed, before
    /// it is tried again).
    fn clear(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.slices.clear();
        free.bytes = 0;
    }
}

/// `count` elements of `dtype` in device (or unified) memory.
pub struct CudaBuffer {
    dtype: DType,
    len: usize,
    /// The allocation (`None` only while dropping).
    slice: Option<Memory>,
    stream: Arc<CudaStream>,
    cache: Arc<BufferCache>,
}

/// A driver error as a device error about `what`.
pub(super) fn driver(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> DeviceError + '_ {
    move |e| DeviceError::Driver {
        what: format!("CUDA: {what}"),
        reason: e.to_string(),
    }
}

impl CudaBuffer {
    /// A buffer of `count` elements of `dtype` on `stream`'s device (in
    /// unified memory with `unified`), from `cache` when it holds an
    /// allocation of that size. Its contents are unspecified.
    pub fn allocate(
        stream: &Arc<CudaStream>,
        cache: &Arc<BufferCache>,
        unified: bool,
        dtype: DType,
        count: usize,
    ) -> DeviceResult<CudaBuffer> {
        let bytes = count
            .checked_mul(dtype.itemsize())
            .ok_or_else(|| DeviceError::Alloc {
                dtype,
                count,
                reason: "the size in bytes overflows".to_string(),
            })?
            .max(1);
        let alloc = || -> Result<Memory, cudarc::driver::DriverError> {
            // SAFETY: the contents are unspecified by the trait's
            // contract; every element is written before it is read.
            unsafe {
                if unified {
                    stream
                        .context()
                        .alloc_unified::<u8>(bytes, true)
                        .map(Memory::Unified)
                } else {
                    stream.alloc::<u8>(bytes).map(Memory::Device)
                }
            }
        };
        let slice = match cache.take(bytes) {
            Some(s) => s,
            None => match alloc() {
                Ok(s) => s,
                Err(_) => {
                    // Memory held for reuse may be what is missing.
                    cache.clear();
                    alloc().map_err(|e| DeviceError::Alloc {
                        dtype,
                        count,
                        reason: format!("CUDA: {e}"),
                    })?
                }
            },
        };
        Ok(CudaBuffer {
            dtype,
            len: count,
            slice: Some(slice),
            stream: stream.clone(),
            cache: cache.clone(),
        })
    }

    /// The allocation.
    pub fn memory(&self) -> &Memory {
        self.slice
            .as_ref()
            .expect("a live buffer holds its allocation")
    }

    /// The context of the GPU the buffer lives on.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.stream.context()
    }

    /// Checks that `bytes` is as long as the buffer.
    fn check_len(&self, bytes: usize, what: &str) -> DeviceResult<()> {
        if bytes == self.nbytes() {
            Ok(())
        } else {
            Err(DeviceError::BadArgs {
                what: format!("CUDA buffer {what}"),
                reason: format!("{bytes} bytes given, the buffer holds {}", self.nbytes()),
            })
        }
    }
}

/// A device-to-device copy of `src` into `dst` on `stream` (between two
/// GPUs, after the source's stream has done its queued work).
fn dtod(
    stream: &Arc<CudaStream>,
    src: &impl DevicePtr<u8>,
    dst: &mut impl DevicePtrMut<u8>,
) -> Result<(), cudarc::driver::DriverError> {
    stream.memcpy_dtod(src, dst)
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            self.cache.put(slice);
        }
    }
}

impl DeviceBuffer for CudaBuffer {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn len(&self) -> usize {
        self.len
    }

    fn copy_in(&mut self, bytes: &[u8]) -> DeviceResult<()> {
        self.check_len(bytes.len(), "copy in")?;
        if bytes.is_empty() {
            return Ok(());
        }
        let stream = self.stream.clone();
        let n = bytes.len();
        let copied = match self
            .slice
            .as_mut()
            .expect("a live buffer holds its allocation")
        {
            Memory::Device(s) => stream.memcpy_htod(bytes, &mut s.slice_mut(..n)),
            Memory::Unified(s) => stream.memcpy_htod(bytes, &mut s.slice_mut(..n)),
        };
        copied.map_err(driver("copying to the device"))
    }

    fn copy_out(&self, bytes: &mut [u8]) -> DeviceResult<()> {
        self.check_len(bytes.len(), "copy out")?;
        if bytes.is_empty() {
            return Ok(());
        }
        let n = bytes.len();
        let copied = match self.memory() {
            Memory::Device(s) => self.stream.memcpy_dtoh(&s.slice(..n), bytes),
            Memory::Unified(s) => self.stream.memcpy_dtoh(&s.slice(..n), bytes),
        };
        copied.map_err(driver("copying from the device"))?;
        self.stream
            .synchronize()
            .map_err(driver("waiting for the stream"))
    }

    /// From another CUDA buffer (this GPU's or another's), device to
    /// device on this buffer's stream; `Ok(false)` for other devices'
    /// buffers.
    fn copy_from(&mut self, source: &dyn DeviceBuffer) -> DeviceResult<bool> {
        let Some(src) = source.as_any().downcast_ref::<CudaBuffer>() else {
            return Ok(false);
        };
        self.check_len(src.nbytes(), "copy from another CUDA buffer")?;
        let n = src.nbytes();
        if n == 0 {
            return Ok(true);
        }
        let stream = self.stream.clone();
        let dst = self
            .slice
            .as_mut()
            .expect("a live buffer holds its allocation");
        let copied = match (src.memory(), dst) {
            (Memory::Device(a), Memory::Device(b)) => {
                dtod(&stream, &a.slice(..n), &mut b.slice_mut(..n))
            }
            (Memory::Device(a), Memory::Unified(b)) => {
                dtod(&stream, &a.slice(..n), &mut b.slice_mut(..n))
            }
            (Memory::Unified(a), Memory::Device(b)) => {
                dtod(&stream, &a.slice(..n), &mut b.slice_mut(..n))
            }
            (Memory::Unified(a), Memory::Unified(b)) => {
                dtod(&stream, &a.slice(..n), &mut b.slice_mut(..n))
            }
        };
        copied.map_err(driver("copying between CUDA buffers"))?;
        Ok(true)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
