//! Compiles kernels-gpu to PTX through ptx-builder (the same code as `cargo xtask ptx`),
//! which checks it against the kernel-family table: the build fails if the PTX lacks an
//! entry the table names, has one it does not name, or an entry takes another argument
//! struct than its row says. The PTX lands in OUT_DIR/kernels.ptx for `include_str!`.
//!
//! Then ptxas, where this machine has it, assembles that PTX for the same architecture
//! into OUT_DIR/kernels.cubin, which the host loads instead of having the driver JIT the
//! PTX (about a minute on the H200's machine, in every process its cache misses). Without ptxas, or with `GPUCONV_CUBIN=0`, the cubin is
//! empty and the host JITs the PTX as before; `kernels.cubin.txt` says which.
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
    println!("cargo:rerun-if-env-changed=GPUCONV_CUBIN");
    println!("cargo:rerun-if-env-changed=PTXAS");
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
    let cubin = out_dir.join("kernels.cubin");
    let made = if std::env::var("GPUCONV_CUBIN").is_ok_and(|v| v == "0") {
        Err("GPUCONV_CUBIN=0".to_string())
    } else {
        ptx_builder::ptxas::find()
            .and_then(|(ptxas, _)| ptx_builder::ptxas::assemble_cubin(&ptxas, &opts.out_file, &arch, &cubin))
    };
    // The host reads this line to say which image it loaded.
    let about = match made {
        Ok(version) => format!("{arch} SASS from {version}"),
        Err(why) => {
            let why = why.lines().next().unwrap_or("");
            println!("cargo:warning=no cubin embedded (the driver will JIT the PTX): {why}");
            std::fs::write(&cubin, []).unwrap_or_else(|e| panic!("{}: {e}", cubin.display()));
            why.to_string()
        }
    };
    let txt = out_dir.join("kernels.cubin.txt");
    std::fs::write(&txt, about).unwrap_or_else(|e| panic!("{}: {e}", txt.display()));
}
