//! `cargo xtask ptx`: build the device crate through ptx-builder (the same code path as
//! `host/build.rs`, so CI checks exactly the PTX the library embeds) and check it.
use std::path::{Path, PathBuf};

use ptx_builder::BuildOptions;

use crate::Result;

/// Builds `kernels-gpu` to `target/ptx/<arch>/kernels.ptx`, checks that every expected
/// entry, every `.const` mask and no unresolved function is there, and reports what it
/// found. Extra entries are allowed (new kernels land before the list learns of them)
/// but printed so nobody forgets to add them to `ptx_builder::expected_entries`.
pub fn build_and_check(root: &Path, arch: &str) -> Result<PathBuf> {
    let opts = BuildOptions::for_workspace(root, arch);
    println!("xtask ptx: building {} for {arch} ...", opts.crate_dir.display());
    let ptx = ptx_builder::build(&opts)?;

    let expected = ptx_builder::expected_entries();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    ptx_builder::check(&ptx, &expected)?;

    let found = ptx_builder::entries(&ptx);
    let extra = ptx_builder::extra_entries(&ptx, &expected);
    println!("PTX:       {}", opts.out_file.display());
    println!(
        "entries:   {} ({} expected, {} extra)",
        found.len(),
        expected.len(),
        extra.len()
    );
    for e in &extra {
        println!("  extra entry (not in ptx_builder::expected_entries): {e}");
    }
    let consts = ptx_builder::const_symbols(&ptx);
    let names: Vec<&str> = consts.iter().map(|(n, _)| *n).collect();
    println!("const:     {} symbol(s): {}", names.len(), names.join(", "));
    for (_, decl) in &consts {
        println!("  {decl}");
    }
    println!("PTX check: ok");
    Ok(opts.out_file)
}
