//! Compiles kernels-gpu to PTX (through ptx-builder, the same code as `cargo xtask ptx`)
//! and leaves it in OUT_DIR/kernels.ptx for `include_str!`.
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let arch = std::env::var("GPUCONV_ARCH").unwrap_or_else(|_| ptx_builder::DEFAULT_ARCH.to_string());
    let mut opts = ptx_builder::BuildOptions::for_workspace(&root, &arch);
    opts.out_file = out_dir.join("kernels.ptx");
    println!("cargo:rerun-if-changed={}", root.join("kernels-gpu/src").display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("kernels-gpu/Cargo.toml").display()
    );
    println!("cargo:rerun-if-env-changed=GPUCONV_ARCH");
    if let Err(e) = ptx_builder::build(&opts) {
        panic!("{e}");
    }
}
