//! Compiles kernels-gpu to PTX through ptx-builder (the same code as `cargo xtask ptx`),
//! which checks it against the kernel-family table: the build fails if the PTX lacks an
//! entry the table names, has one it does not name, or an entry takes another argument
//! struct than its row says. The PTX lands in OUT_DIR/kernels.ptx for `include_str!`.
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let arch = std::env::var("GPUCONV_ARCH").unwrap_or_else(|_| ptx_builder::DEFAULT_ARCH.to_string());
    let mut opts = ptx_builder::BuildOptions::for_workspace(&root, &arch);
    opts.out_file = out_dir.join("kernels.ptx");
    for dir in [
        "kernels-gpu/src",
        "kernels-gpu/Cargo.toml",
        "layout/src",
        "layout/Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=GPUCONV_ARCH");
    match ptx_builder::build(&opts) {
        Ok(built) => {
            // A build script's output is hidden: the device build's warnings only show
            // as `cargo:warning` lines.
            for w in built.warnings {
                for line in w.lines() {
                    println!("cargo:warning=kernels-gpu: {line}");
                }
            }
        }
        Err(e) => panic!("{e}"),
    }
}
