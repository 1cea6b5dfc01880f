//! Files of the on-disk kernel caches (LLVM objects, CUDA PTX): each
//! entry beside a blake3 checksum of its bytes, both written through a
//! temporary file renamed into place, so a reader sees a complete entry
//! or none, and a corrupt one (checksum mismatch) is rebuilt.

use crate::cpu::c::compiler::{checksum_hex, create_private_dir, io};
use morok_core::device::DeviceResult;
use std::io::Write;
use std::path::Path;

/// The contents of `obj` if its blake3 checksum matches `sum`.
pub(crate) fn read_checked(obj: &Path, sum: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(obj).ok()?;
    let expected = std::fs::read_to_string(sum).ok()?;
    (checksum_hex(&bytes) == expected.trim()).then_some(bytes)
}

/// Writes `bytes` to `obj` and its checksum to `sum`, each through a
/// temporary file renamed into place (the object first).
pub(crate) fn store(dir: &Path, obj: &Path, sum: &Path, bytes: &[u8]) -> DeviceResult<()> {
    create_private_dir(dir)?;
    let write = |path: &Path, data: &[u8]| -> DeviceResult<()> {
        let mut f = tempfile::Builder::new()
            .prefix(".build-")
            .tempfile_in(dir)
            .map_err(io(format!(
                "creating a temporary file in {}",
                dir.display()
            )))?;
        f.write_all(data)
            .map_err(io(format!("writing {}", f.path().display())))?;
        f.persist(path)
            .map_err(|e| io(format!("storing {}", path.display()))(e.error))?;
        Ok(())
    };
    write(obj, bytes)?;
    write(sum, checksum_hex(bytes).as_bytes())
}
