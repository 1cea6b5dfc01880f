//! Tells the library whether it is compiled without optimization (the
//! dev profile of a crate that depends on Morok without a profile
//! override), so it can tell the user what that costs
//! (`src/debug_build.rs`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(morok_unoptimized)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if std::env::var("OPT_LEVEL").as_deref() == Ok("0") {
        println!("cargo::rustc-cfg=morok_unoptimized");
    }
}
