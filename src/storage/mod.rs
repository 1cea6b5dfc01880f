//! The buffer registry: the data behind every BUFFER node.
//!
//! A buffer is registered with [`upload`] (user data) or by the runtime
//! (a kernel's output) and identified by the id of its BUFFER node. The
//! registry owns the device memory; [`BufferRef`] handles keep an entry
//! alive, and the entry is freed when the last handle is dropped. Tensors
//! hold the handles of every buffer their graph reads, so a buffer lives
//! exactly as long as some tensor can still use it. Kernels read inputs
//! straight from the registered device buffers: a realize copies nothing
//! in, and an output stays on the device until it is read.
//!
//! Elements are stored in the machine's native byte order, `bool` as one
//! byte (0 or 1), `f16`/`bf16` as their 16-bit patterns: the layout a
//! compiled kernel reads and writes.

pub mod codec;

use crate::device::Device;
use crate::Error;
use morok_core::device::DeviceBuffer;
use morok_core::{new_buffer_id, DType, ScalarType};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// A copy of one registered buffer's contents.
#[derive(Clone, Debug)]
pub struct HostBuffer {
    /// Element type.
    pub dtype: ScalarType,
    /// Number of elements.
    pub len: usize,
    /// `len * dtype.itemsize()` bytes.
    pub bytes: Arc<[u8]>,
}

struct Entry {
    buffer: Arc<dyn DeviceBuffer>,
    /// The device that allocated the buffer.
    device: Device,
    /// Elements the buffer represents (the device may round up).
    len: usize,
    owner: Weak<Owner>,
}

/// Frees its registry entry when dropped.
struct Owner {
    id: u64,
}

impl Drop for Owner {
    fn drop(&mut self) {
        // Take the entry out under the lock, free the memory after it.
        let entry = registry().remove(&self.id);
        drop(entry);
    }
}

/// A counted handle to a registered buffer; the buffer is freed when the
/// last handle is dropped.
#[derive(Clone)]
pub struct BufferRef(Arc<Owner>);

impl BufferRef {
    /// The buffer's id (the `id` of its BUFFER node).
    pub fn id(&self) -> u64 {
        self.0.id
    }
}

impl std::fmt::Debug for BufferRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BufferRef({})", self.0.id)
    }
}

fn registry() -> MutexGuard<'static, HashMap<u64, Entry>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u64, Entry>>> = OnceLock::new();
    // A panic while the lock was held cannot leave a map half-updated
    // (every critical section is a single map operation), so a poisoned
    // lock is safe to reuse.
    REGISTRY
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Copies `bytes` into a new buffer of `len` elements of `dtype` on the
/// default device ([`Device::default_device`]), registered under a fresh
/// buffer id.
#[track_caller]
pub fn upload(dtype: ScalarType, len: usize, bytes: Vec<u8>) -> Result<BufferRef, Error> {
    upload_to(&Device::default_device()?, dtype, len, bytes)
}

/// Copies `bytes` into a new buffer of `len` elements of `dtype` on
/// `device`, registered under a fresh buffer id.
#[track_caller]
pub fn upload_to(
    device: &Device,
    dtype: ScalarType,
    len: usize,
    bytes: Vec<u8>,
) -> Result<BufferRef, Error> {
    let expected = len.checked_mul(dtype.itemsize());
    if expected != Some(bytes.len()) || matches!(dtype, ScalarType::Void | ScalarType::Index) {
        return Err(Error::runtime(
            "upload",
            format!(
                "{} bytes do not hold {len} elements of {dtype}",
                bytes.len()
            ),
        ));
    }
    let mut buffer = match device.backend().allocate(DType::scalar(dtype), len.max(1)) {
        Ok(b) => b,
        Err(e) => return Err(Error::runtime("upload", e.to_string())),
    };
    let mut padded = bytes;
    padded.resize(buffer.nbytes(), 0);
    if let Err(e) = buffer.copy_in(&padded) {
        return Err(Error::runtime("upload", e.to_string()));
    }
    Ok(register(
        new_buffer_id(),
        device.clone(),
        Arc::from(buffer),
        len,
    ))
}

/// A copy of registered buffer `id` on `device`, registered under a fresh
/// id, with its element type and the elements it represents: straight
/// from device to device where the backend can
/// ([`DeviceBuffer::copy_from`]: two GPUs), else through the host.
#[track_caller]
pub fn copy_to(device: &Device, id: u64) -> Result<(BufferRef, ScalarType, usize), Error> {
    let Some((source, len)) = registry().get(&id).map(|e| (e.buffer.clone(), e.len)) else {
        return Err(Error::runtime(
            "to_device",
            format!("buffer {id} is not in storage"),
        ));
    };
    let fail = |e: morok_core::device::DeviceError| Error::runtime("to_device", e.to_string());
    let mut buffer = device
        .backend()
        .allocate(source.dtype(), source.len())
        .map_err(fail)?;
    if !buffer.copy_from(&*source).map_err(fail)? {
        let mut bytes = vec![0u8; source.nbytes()];
        source.copy_out(&mut bytes).map_err(fail)?;
        buffer.copy_in(&bytes).map_err(fail)?;
    }
    let dtype = source.dtype().scalar_type();
    let handle = register(new_buffer_id(), device.clone(), Arc::from(buffer), len);
    Ok((handle, dtype, len))
}

/// Registers a buffer of `device` under an id the compiler chose (a
/// schedule's output BUFFER); it represents its first `len` elements.
pub(crate) fn register(
    id: u64,
    device: Device,
    buffer: Arc<dyn DeviceBuffer>,
    len: usize,
) -> BufferRef {
    let owner = Arc::new(Owner { id });
    registry().insert(
        id,
        Entry {
            buffer,
            device,
            len,
            owner: Arc::downgrade(&owner),
        },
    );
    BufferRef(owner)
}

/// The device buffer registered as `id`, for a kernel to read.
pub(crate) fn device_buffer(id: u64) -> Option<Arc<dyn DeviceBuffer>> {
    registry().get(&id).map(|e| e.buffer.clone())
}

/// The device buffer registered as `id` and its device, in one look-up.
pub(crate) fn buffer_and_device(id: u64) -> Option<(Arc<dyn DeviceBuffer>, Device)> {
    registry()
        .get(&id)
        .map(|e| (e.buffer.clone(), e.device.clone()))
}

/// The device holding buffer `id`, if it is registered.
pub fn device_of(id: u64) -> Option<Device> {
    registry().get(&id).map(|e| e.device.clone())
}

/// The one device holding every registered buffer among `ids` (`None`
/// when none is registered); two devices are an error naming both.
pub(crate) fn common_device(ids: impl IntoIterator<Item = u64>) -> Result<Option<Device>, String> {
    let mut found: Option<Device> = None;
    for id in ids {
        let Some(d) = device_of(id) else {
            continue;
        };
        match &found {
            Some(f) if *f != d => return Err(format!("{} and {}", f.name(), d.name())),
            Some(_) => {}
            None => found = Some(d),
        }
    }
    Ok(found)
}

/// A copy of the contents of buffer `id`, if it is registered.
pub fn read(id: u64) -> Option<HostBuffer> {
    let (buffer, len) = {
        let reg = registry();
        let e = reg.get(&id)?;
        (e.buffer.clone(), e.len)
    };
    let mut bytes = vec![0u8; buffer.nbytes()];
    buffer.copy_out(&mut bytes).ok()?;
    let dtype = buffer.dtype().scalar_type();
    bytes.truncate(len * dtype.itemsize());
    Some(HostBuffer {
        dtype,
        len,
        bytes: bytes.into(),
    })
}

/// Makes buffer `target` hold what buffer `source` holds, by sharing
/// `source`'s device memory: how [`crate::Tensor::assign`] writes a
/// computed value into a parameter without a copy. Both must be
/// registered, on one device, with one dtype and length. Sharing is safe
/// because no kernel writes into a registered buffer: every realize and
/// every DSL call writes its outputs into memory it has just allocated.
pub(crate) fn rebind(target: u64, source: u64) -> Result<(), String> {
    let mut reg = registry();
    let Some(src) = reg.get(&source) else {
        return Err(format!("buffer {source} is not registered"));
    };
    let (buffer, device, len) = (src.buffer.clone(), src.device.clone(), src.len);
    let Some(dst) = reg.get_mut(&target) else {
        return Err(format!("buffer {target} is not registered"));
    };
    if dst.device != device || dst.len != len || dst.buffer.dtype() != buffer.dtype() {
        return Err(format!(
            "buffer {target} ({} × {} on {}) cannot take the contents of buffer {source} ({len} × {} on {})",
            dst.len,
            dst.buffer.dtype(),
            dst.device.name(),
            buffer.dtype(),
            device.name()
        ));
    }
    let old = std::mem::replace(&mut dst.buffer, buffer);
    drop(reg);
    drop(old);
    Ok(())
}

/// A new handle to the registered buffer `id`, if it is still alive.
pub fn handle(id: u64) -> Option<BufferRef> {
    registry()
        .get(&id)
        .and_then(|e| e.owner.upgrade())
        .map(BufferRef)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_live_as_long_as_their_handles() {
        let a = upload(ScalarType::U8, 3, vec![1, 2, 3]).unwrap();
        let id = a.id();
        assert_eq!(&*read(id).unwrap().bytes, &[1, 2, 3]);
        let b = handle(id).unwrap();
        drop(a);
        assert!(read(id).is_some());
        drop(b);
        assert!(read(id).is_none());
        assert!(handle(id).is_none());
    }

    #[test]
    fn upload_checks_the_byte_count() {
        let e = upload(ScalarType::F32, 2, vec![0; 7]).unwrap_err();
        assert!(e
            .to_string()
            .contains("7 bytes do not hold 2 elements of f32"));
    }
}
