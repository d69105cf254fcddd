//! `cargo xtask ptx`: build the device crate through ptx-builder (the same code path as
//! `host/build.rs`, so CI checks exactly the PTX the library embeds, against the same
//! kernel-family table) and report what it holds.
use std::path::{Path, PathBuf};

use ptx_builder::BuildOptions;

use crate::Result;

/// Builds `kernels-gpu` to `target/ptx/<arch>/kernels.ptx`; ptx-builder fails the build
/// if the entries are not exactly the table's, an entry takes another argument struct,
/// a `.const` mask is missing or a function is unresolved. Prints the device build's
/// warnings and what the module holds.
pub fn build_and_check(root: &Path, arch: &str) -> Result<PathBuf> {
    let opts = BuildOptions::for_workspace(root, arch);
    println!("xtask ptx: building {} for {arch} ...", opts.crate_dir.display());
    let built = ptx_builder::build(&opts)?;
    for w in &built.warnings {
        println!("{w}");
    }
    let found = ptx_builder::entries(&built.ptx);
    println!("PTX:       {}", opts.out_file.display());
    println!(
        "entries:   {} (exactly the {} the table names: {} families and the FMA probe)",
        found.len(),
        ptx_builder::expected_entries().len(),
        layout::families::ALL.len()
    );
    let consts = ptx_builder::const_symbols(&built.ptx);
    let names: Vec<&str> = consts.iter().map(|(n, _)| *n).collect();
    println!("const:     {} symbol(s): {}", names.len(), names.join(", "));
    for (_, decl) in &consts {
        println!("  {decl}");
    }
    if !built.warnings.is_empty() {
        return Err(format!("the device build printed {} warning(s)", built.warnings.len()).into());
    }
    println!("PTX check: ok");
    Ok(opts.out_file)
}

/// `cargo xtask clippy-device`: clippy on kernels-gpu for nvptx64, warnings denied.
pub fn clippy(root: &Path, arch: &str) -> Result<()> {
    let opts = BuildOptions::for_workspace(root, arch);
    println!(
        "xtask clippy-device: clippy on {} for nvptx64 ...",
        opts.crate_dir.display()
    );
    let log = ptx_builder::clippy(&opts)?;
    print!("{log}");
    println!("clippy (nvptx64): ok");
    Ok(())
}
