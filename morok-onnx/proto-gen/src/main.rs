//! Regenerates the checked-in prost code for ONNX's protobuf schema.
//!
//! Run from the repository root:
//! `cargo run --manifest-path morok-onnx/proto-gen/Cargo.toml`.
//! It parses `morok-onnx/proto/onnx.proto` with `protox` (a Rust protobuf
//! compiler, so no system `protoc`) and writes `morok-onnx/schema/src/proto/onnx.rs`.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let proto_dir = root.join("proto");
    let out_dir = root.join("schema").join("src").join("proto");
    let descriptors = protox::compile([proto_dir.join("onnx.proto")], [&proto_dir])?;
    prost_build::Config::new()
        .out_dir(&out_dir)
        .compile_fds(descriptors)?;
    println!("wrote {}", out_dir.join("onnx.rs").display());
    Ok(())
}
