//! Which device a tensor lives on, and moving it to another.

use super::Tensor;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::storage;

impl Tensor {
    /// The device holding this tensor's buffers: where it realizes. A
    /// tensor that reads no buffer (built from constants only) realizes on
    /// the default device ([`Device::default_device`]). A tensor mixing
    /// buffers of two devices is an error.
    #[track_caller]
    pub fn device(&self) -> Result<Device> {
        let ids = self.graph()?.buffers.iter().map(|b| b.id());
        match storage::common_device(ids) {
            Ok(Some(d)) => Ok(d),
            Ok(None) => Device::default_device(),
            Err(two) => Err(Error::runtime(
                "device",
                format!("the tensor reads buffers of {two}"),
            )),
        }
    }

    /// This tensor's values on `device`: the tensor itself when it is
    /// already there, otherwise it is realized on its own device and its
    /// elements are copied (from GPU to GPU without the host where the
    /// backend can).
    #[track_caller]
    pub fn to_device(&self, device: &Device) -> Result<Tensor> {
        if self.device()? == *device {
            return Ok(self.clone());
        }
        crate::call_cache::touch(&self.uop());
        let realized = self.realize()?;
        let Some(id) = realized.buffer_view() else {
            return Err(Error::runtime(
                "to_device",
                "the realized tensor is not a buffer view",
            ));
        };
        let (handle, dtype, len) = storage::copy_to(device, id)?;
        Tensor::view_buffer(handle, dtype, len, self.shape())
    }
}
