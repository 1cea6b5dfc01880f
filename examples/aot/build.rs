//! Compiles the kernels of `src/kernels.rs` ahead of time (`morok_build`).

// The build script uses only the kernels' specs, not the functions.
#[allow(dead_code)]
#[path = "src/kernels.rs"]
mod kernels;

fn main() {
    println!("cargo:rerun-if-changed=src/kernels.rs");
    let specs = morok::aot::kernels!(kernels::scale_add, kernels::mlp);
    if let Err(e) = morok_build::compile(&specs) {
        panic!("{e}");
    }
}
