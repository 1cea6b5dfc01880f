//! Devices: where tensors live and kernels run.
//!
//! The runtime speaks to a device only through the core's
//! [`Backend`] trait (`morok_core::device::Device`). A [`Device`] is a
//! cheap handle to one backend instance. Devices are found by name:
//! `CPU` (C through the system compiler) is built in, and `LLVM` (an
//! in-process LLVM JIT) with the `llvm` feature, `CUDA` with the `cuda`
//! feature (an error on a machine without its libraries); others can be
//! registered with [`Device::register`] (an out-of-tree backend, a test
//! device). Each name is instantiated once per process.
//!
//! The default device is `MOROK_DEVICE` (default `CPU`), or the one set
//! with [`Device::set_default`]. New tensors are uploaded to the default
//! device; a tensor remembers the device of its buffers, and a realize
//! runs on the device of its inputs ([`crate::Tensor::to_device`] moves
//! data between devices).

use crate::Error;
use morok_backends::CpuDevice;
pub use morok_core::device::Device as Backend;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

/// Creates a backend instance (called at most once per name).
pub type DeviceFactory =
    Box<dyn Fn() -> std::result::Result<Arc<dyn Backend>, String> + Send + Sync>;

/// A handle to a device.
#[derive(Clone)]
pub struct Device {
    backend: Arc<dyn Backend>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.name())
    }
}

impl PartialEq for Device {
    /// Two handles are equal when they denote the same backend instance.
    fn eq(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.backend, &other.backend)
    }
}

impl Eq for Device {}

/// The registry of device names: a factory per name, and the instance once
/// made.
struct Registry {
    factories: BTreeMap<String, Arc<DeviceFactory>>,
    instances: BTreeMap<String, Device>,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let mut factories: BTreeMap<String, Arc<DeviceFactory>> = BTreeMap::new();
            let cpu: DeviceFactory =
                Box::new(|| Ok(Arc::new(CpuDevice::new()) as Arc<dyn Backend>));
            factories.insert("CPU".to_string(), Arc::new(cpu));
            #[cfg(feature = "llvm")]
            {
                let llvm: DeviceFactory = Box::new(|| {
                    let config = morok_backends::CpuConfig::from_env();
                    let codegen = morok_backends::cpu::LlvmCodegen::new(config.cache_dir.clone());
                    Ok(Arc::new(CpuDevice::with_codegen(config, Arc::new(codegen)))
                        as Arc<dyn Backend>)
                });
                factories.insert("LLVM".to_string(), Arc::new(llvm));
            }
            #[cfg(feature = "cuda")]
            {
                let cuda: DeviceFactory = Box::new(|| cuda_device(0));
                factories.insert("CUDA".to_string(), Arc::new(cuda));
            }
            Mutex::new(Registry {
                factories,
                instances: BTreeMap::new(),
            })
        })
        .lock()
        // Every critical section is a single map operation: a poisoned
        // lock cannot hold a half-updated map.
        .unwrap_or_else(|e| e.into_inner())
}

/// The GPU number of a device name `CUDA:N` (`CUDA` itself is GPU 0);
/// `None` for other names, and without the feature `cuda`.
fn cuda_ordinal(key: &str) -> Option<usize> {
    let n = key.strip_prefix("CUDA:")?.parse().ok()?;
    cfg!(feature = "cuda").then_some(n)
}

/// Opens CUDA GPU `ordinal` (feature `cuda`).
fn cuda_device(ordinal: usize) -> Result<Arc<dyn Backend>, String> {
    #[cfg(feature = "cuda")]
    {
        morok_backends::cuda::open_device(ordinal)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(format!(
            "CUDA:{ordinal}: Morok was built without the feature `cuda`"
        ))
    }
}

/// The default device set in code, if any (overrides `MOROK_DEVICE`).
fn default_override() -> &'static RwLock<Option<Device>> {
    static DEFAULT: RwLock<Option<Device>> = RwLock::new(None);
    &DEFAULT
}

impl Device {
    /// The device called `name` (case-insensitive: `cpu` is `CPU`;
    /// with the feature `cuda`, `CUDA` is GPU 0 and `CUDA:N` GPU `N`).
    /// An unknown name, or a device that cannot start on this machine, is
    /// an error naming the devices that exist.
    #[track_caller]
    pub fn get(name: &str) -> Result<Device, Error> {
        let mut key = name.trim().to_ascii_uppercase();
        if key == "CUDA:0" {
            key = "CUDA".to_string();
        }
        let factory = {
            let reg = registry();
            if let Some(d) = reg.instances.get(&key) {
                return Ok(d.clone());
            }
            match reg.factories.get(&key) {
                Some(f) => f.clone(),
                None if cuda_ordinal(&key).is_some() => {
                    let ordinal = cuda_ordinal(&key).unwrap_or(0);
                    let open: DeviceFactory = Box::new(move || cuda_device(ordinal));
                    Arc::new(open)
                }
                None => {
                    let names: Vec<&str> = reg.factories.keys().map(String::as_str).collect();
                    return Err(Error::runtime(
                        "device",
                        format!(
                            "unknown device `{name}`; the devices are {}",
                            names.join(", ")
                        ),
                    ));
                }
            }
        };
        // The factory runs outside the lock (it may take time, or look up
        // other devices); if two threads race, the first instance wins.
        let made = match factory() {
            Ok(b) => Device { backend: b },
            Err(e) => {
                return Err(Error::runtime(
                    "device",
                    format!(
                        "device `{key}` is not available: {e}; the devices are {}",
                        Device::names().join(", ")
                    ),
                ))
            }
        };
        Ok(registry().instances.entry(key).or_insert(made).clone())
    }

    /// Registers a device under `name` (upper-cased), made by `factory` on
    /// first use. Registering a name that exists is an error.
    #[track_caller]
    pub fn register(
        name: &str,
        factory: impl Fn() -> std::result::Result<Arc<dyn Backend>, String> + Send + Sync + 'static,
    ) -> Result<(), Error> {
        let key = name.trim().to_ascii_uppercase();
        let mut reg = registry();
        if key.is_empty() || reg.factories.contains_key(&key) {
            return Err(Error::runtime(
                "device",
                format!("cannot register device `{name}`: the name is empty or taken"),
            ));
        }
        reg.factories.insert(key, Arc::new(Box::new(factory)));
        Ok(())
    }

    /// The names of the known devices (built in and registered).
    pub fn names() -> Vec<String> {
        registry().factories.keys().cloned().collect()
    }

    /// The default device: the one set with [`Device::set_default`], else
    /// `MOROK_DEVICE`, else `CPU`.
    #[track_caller]
    pub fn default_device() -> Result<Device, Error> {
        if let Some(d) = default_override()
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(d.clone());
        }
        match std::env::var("MOROK_DEVICE") {
            Ok(name) if !name.trim().is_empty() => Device::get(&name),
            _ => Device::get("CPU"),
        }
    }

    /// Makes `device` the default for new tensors in this process.
    pub fn set_default(device: &Device) {
        *default_override()
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(device.clone());
    }

    /// The device's name (`CPU`, ...).
    pub fn name(&self) -> &str {
        self.backend.name()
    }

    /// Waits until every kernel and copy queued on this device has
    /// finished (GPUs queue them and return at once; on the CPU devices it
    /// returns at once). Reading a tensor's values waits by itself: this
    /// is for timing, or for handing the device's memory to other code.
    #[track_caller]
    pub fn synchronize(&self) -> Result<(), Error> {
        match self.backend.synchronize() {
            Ok(()) => Ok(()),
            Err(e) => Err(Error::runtime(
                "synchronize",
                format!("device `{}`: {e}", self.name()),
            )),
        }
    }

    /// The backend behind the handle.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The shared backend instance.
    pub(crate) fn backend_arc(&self) -> &Arc<dyn Backend> {
        &self.backend
    }
}
