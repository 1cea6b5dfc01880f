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
//! realize's read-back its one synchronization point.

use cudarc::driver::{CudaSlice, CudaStream};
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
    slices: VecDeque<CudaSlice<u8>>,
    bytes: usize,
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
    fn take(&self, bytes: usize) -> Option<CudaSlice<u8>> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let i = free.slices.iter().rposition(|s| s.len() == bytes)?;
        let slice = free.slices.remove(i)?;
        free.bytes -= bytes;
        Some(slice)
    }

    /// Keeps `slice` for reuse, freeing the least recently freed
    /// allocations while the cache holds more than its limit.
    fn put(&self, slice: CudaSlice<u8>) {
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

/// `count` elements of `dtype` in device memory.
pub struct CudaBuffer {
    dtype: DType,
    len: usize,
    /// The allocation (`None` only while dropping).
    slice: Option<CudaSlice<u8>>,
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
    /// A buffer of `count` elements of `dtype` on `stream`'s device, from
    /// `cache` when it holds an allocation of that size. Its contents are
    /// unspecified.
    pub fn allocate(
        stream: &Arc<CudaStream>,
        cache: &Arc<BufferCache>,
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
        let slice = match cache.take(bytes) {
            Some(s) => s,
            None => {
                // SAFETY: the contents are unspecified by the trait's
                // contract; every element is written before it is read.
                let first = unsafe { stream.alloc::<u8>(bytes) };
                match first {
                    Ok(s) => s,
                    Err(_) => {
                        // Memory held for reuse may be what is missing.
                        cache.clear();
                        // SAFETY: as above.
                        unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| DeviceError::Alloc {
                            dtype,
                            count,
                            reason: format!("CUDA: {e}"),
                        })?
                    }
                }
            }
        };
        Ok(CudaBuffer {
            dtype,
            len: count,
            slice: Some(slice),
            stream: stream.clone(),
            cache: cache.clone(),
        })
    }

    /// The device allocation.
    pub fn slice(&self) -> &CudaSlice<u8> {
        self.slice
            .as_ref()
            .expect("a live buffer holds its allocation")
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
        let slice = self
            .slice
            .as_mut()
            .expect("a live buffer holds its allocation");
        let mut view = slice.slice_mut(..bytes.len());
        stream
            .memcpy_htod(bytes, &mut view)
            .map_err(driver("copying to the device"))
    }

    fn copy_out(&self, bytes: &mut [u8]) -> DeviceResult<()> {
        self.check_len(bytes.len(), "copy out")?;
        if bytes.is_empty() {
            return Ok(());
        }
        let view = self.slice().slice(..bytes.len());
        self.stream
            .memcpy_dtoh(&view, bytes)
            .map_err(driver("copying from the device"))?;
        self.stream
            .synchronize()
            .map_err(driver("waiting for the stream"))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
