//! Builds the `kernels-gpu` crate into one PTX module and checks it.
//!
//! Fills the role of Rust-CUDA's `cuda_builder` on top of rustc's own nvptx64 backend
//! (see `shared/TOOLCHAIN.md`): `cargo rustc --target nvptx64-nvidia-cuda
//! -Zbuild-std=core -- --emit=asm=<file>` writes a `.s` file that *is* the PTX.
//! `host/build.rs` and `cargo xtask ptx` both call [`build`], so there is exactly one way
//! the device crate gets compiled.
pub mod bake;
pub mod launch_bounds;
pub mod ptxas;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The PTX target architecture used unless told otherwise (the H200 is sm_90).
pub const DEFAULT_ARCH: &str = "sm_90";

/// Every `.entry` the PTX module must contain, and nothing else: every entry of every
/// family of the table (`layout::families`), and the FMA probe.
pub fn expected_entries() -> Vec<String> {
    layout::families::expected_entries().map(|e| e.to_string()).collect()
}

/// The `.const` symbols declared in a PTX module, as `(name, declaration)`.
pub fn const_symbols(ptx: &str) -> Vec<(&str, &str)> {
    ptx.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(".const ") || l.starts_with(".global .const ") || l.starts_with(".visible .const "))
        .filter_map(|l| {
            let decl = l.trim_end_matches(';');
            let last = decl.split_whitespace().last()?;
            let name = last.split(['[', '=']).next()?.trim();
            (!name.is_empty()).then_some((name, l))
        })
        .collect()
}

/// Where a build reads from and writes to.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The `kernels-gpu` crate directory.
    pub crate_dir: PathBuf,
    /// Cargo target directory for the nvptx build (kept apart from the host's).
    pub target_dir: PathBuf,
    /// `sm_XX`, passed as `-C target-cpu`.
    pub arch: String,
    /// The PTX file to write.
    pub out_file: PathBuf,
}

impl BuildOptions {
    /// Defaults relative to the workspace root: `kernels-gpu/`, `target/ptx/<arch>/kernels.ptx`.
    pub fn for_workspace(root: &Path, arch: &str) -> Self {
        BuildOptions {
            crate_dir: root.join("kernels-gpu"),
            target_dir: root.join("kernels-gpu").join("target"),
            arch: arch.to_string(),
            out_file: root.join("target").join("ptx").join(arch).join("kernels.ptx"),
        }
    }
}

/// Why a build or a check failed.
#[derive(Debug)]
pub enum Error {
    /// cargo could not be started.
    Spawn(std::io::Error),
    /// cargo ran and failed; its stderr.
    Cargo(String),
    /// The PTX file could not be read or written.
    Io(PathBuf, std::io::Error),
    /// The PTX is missing something the host relies on.
    Check(Vec<String>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Spawn(e) => write!(f, "could not run cargo for the nvptx build: {e}"),
            Error::Cargo(log) => write!(f, "nvptx build of kernels-gpu failed:\n{log}"),
            Error::Io(p, e) => write!(f, "{}: {e}", p.display()),
            Error::Check(problems) => write!(f, "PTX check failed:\n  {}", problems.join("\n  ")),
        }
    }
}
impl std::error::Error for Error {}

/// A cargo command for the device crate: the outer build's flags removed, the device
/// flags set (target-cpu for every crate, the unroll threshold).
fn device_cargo(opts: &BuildOptions) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // A build script inherits the outer build's flags (host RUSTFLAGS, clippy's wrapper,
    // jobserver); none of them belong to the device build.
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if (k.starts_with("CARGO_") && k != "CARGO_HOME")
            || k.starts_with("RUSTC")
            || k == "RUSTFLAGS"
            || k == "RUSTDOCFLAGS"
        {
            cmd.env_remove(&key);
        }
    }
    cmd.current_dir(&opts.crate_dir)
        // target-cpu for every crate, core included, or rustc refuses the ABI mismatch.
        // The unroll threshold stands in for CUDA's `#pragma unroll`: the fast kernels'
        // register-blocked loops must unroll fully, or their accumulator arrays go to
        // local memory (loops with run-time trip counts are not affected). PTX ISA 8.0
        // for sm_90's tensor copies (`cp.async.bulk.tensor`, `device::tile_map_load`).
        .env(
            "RUSTFLAGS",
            format!(
                "-C target-cpu={} -C target-feature=+ptx80 -C llvm-args=-unroll-threshold=20000",
                opts.arch
            ),
        )
        .env("CARGO_TARGET_DIR", &opts.target_dir);
    cmd
}

/// A checked PTX module and what the device build said on the way.
#[derive(Debug)]
pub struct Built {
    /// The PTX text (also written to `out_file`).
    pub ptx: String,
    /// The device build's warnings (rustc's `warning:` blocks), for the caller to show:
    /// a build script's output is hidden unless it prints them as `cargo:warning`.
    pub warnings: Vec<String>,
}

/// Compiles `kernels-gpu` to PTX, applies the launch bounds, and checks the module
/// against the table ([`check`]): every caller gets a PTX that matches the host.
pub fn build(opts: &BuildOptions) -> Result<Built, Error> {
    if let Some(parent) = opts.out_file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::Io(parent.to_path_buf(), e))?;
    }
    // rustc writes its assembly to a file of its own, never patched: when cargo finds the
    // device crate fresh it does not run rustc, and patching `out_file` in place would
    // apply the launch bounds a second time.
    let raw = opts.out_file.with_extension("rustc.ptx");
    let out = raw.to_string_lossy().into_owned();
    let mut cmd = device_cargo(opts);
    cmd.args([
        "rustc",
        "--release",
        "--target",
        "nvptx64-nvidia-cuda",
        "-Zbuild-std=core",
        "--",
    ])
    .arg(format!("--emit=asm={out}"));
    let output = cmd.output().map_err(Error::Spawn)?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(Error::Cargo(stderr));
    }
    let warnings = warning_blocks(&stderr);
    let ptx = std::fs::read_to_string(&raw).map_err(|e| Error::Io(raw.clone(), e))?;
    let ptx = launch_bounds::apply(&ptx).map_err(|missing| {
        Error::Check(
            missing
                .into_iter()
                .map(|e| format!("launch_bounds for missing entry {e}"))
                .collect(),
        )
    })?;
    std::fs::write(&opts.out_file, &ptx).map_err(|e| Error::Io(opts.out_file.clone(), e))?;
    check(&ptx)?;
    Ok(Built { ptx, warnings })
}

/// rustc's `warning:` blocks in a cargo log (each up to the next blank line), without
/// the summary line `warning: ... generated N warnings`.
pub fn warning_blocks(log: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in log.lines() {
        if line.starts_with("warning") && !line.contains(" generated ") {
            out.extend(cur.take());
            cur = Some(line.to_string());
        } else if line.trim().is_empty() {
            out.extend(cur.take());
        } else if let Some(c) = cur.as_mut() {
            c.push('\n');
            c.push_str(line);
        }
    }
    out.extend(cur);
    out
}

/// Runs clippy on kernels-gpu for nvptx64 (the device crate is outside the workspace,
/// so `cargo clippy --workspace` never sees it), warnings denied. Returns clippy's log.
pub fn clippy(opts: &BuildOptions) -> Result<String, Error> {
    let mut cmd = device_cargo(opts);
    cmd.args([
        "clippy",
        "--release",
        "--target",
        "nvptx64-nvidia-cuda",
        "-Zbuild-std=core",
        "--",
        "-D",
        "warnings",
    ]);
    let output = cmd.output().map_err(Error::Spawn)?;
    let log = String::from_utf8_lossy(&output.stderr).into_owned();
    if output.status.success() {
        Ok(log)
    } else {
        Err(Error::Cargo(log))
    }
}

/// The names of every `.visible .entry` in a PTX module.
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or(rest))
        .collect()
}

/// The parameter declarations of every `.visible .entry`, as `(entry, [declaration])`.
pub fn entry_params(ptx: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out = Vec::new();
    let mut lines = ptx.lines();
    while let Some(l) = lines.next() {
        let Some(rest) = l.trim().strip_prefix(".visible .entry ") else {
            continue;
        };
        let name = rest.split(['(', ' ']).next().unwrap_or(rest);
        let mut params = Vec::new();
        if !rest.trim_end().ends_with(')') {
            for p in lines.by_ref() {
                let p = p.trim();
                if p.starts_with(')') {
                    break;
                }
                params.push(p.trim_end_matches(','));
            }
        }
        out.push((name, params));
    }
    out
}

/// The declaration an entry's one parameter must have: the table's argument struct, by
/// value, with its size and alignment (`.param .align A .b8 <entry>_param_0[N]`).
pub fn expected_param(entry: &str, list: layout::ParamList) -> String {
    let align = match list {
        layout::ParamList::Conv => std::mem::align_of::<layout::ConvArgs>(),
        layout::ParamList::FmaProbe => std::mem::align_of::<layout::FmaProbeArgs>(),
    };
    format!(".param .align {align} .b8 {entry}_param_0[{}]", list.size())
}

/// Checks the PTX against the table, which is what the host relies on: the entries are
/// exactly the ones the table names (none missing, none unnamed), each takes exactly its
/// table row's argument struct, every `.const` mask symbol is declared with its length,
/// and no function is left unresolved (`.extern .func`).
pub fn check(ptx: &str) -> Result<(), Error> {
    let expected: Vec<layout::families::EntryName> = layout::families::expected_entries().collect();
    let names: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
    let found = entry_params(ptx);
    let mut problems = Vec::new();
    for (e, name) in expected.iter().zip(&names) {
        match found.iter().find(|(n, _)| n == name) {
            None => problems.push(format!("missing .entry {name} (named by the table)")),
            Some((_, params)) => {
                let want = expected_param(name, e.params());
                if params.len() != 1 || params[0] != want {
                    problems.push(format!(
                        ".entry {name} takes {params:?}, the table says `{want}` (one {:?} struct)",
                        e.params()
                    ));
                }
            }
        }
    }
    for (name, _) in &found {
        if !names.iter().any(|n| n == name) {
            problems.push(format!(
                ".entry {name} is not named by the table (layout/src/families): add its family or radius"
            ));
        }
    }
    // Launch bounds applied once each: one `.maxntid` per `launch_bounds!` declaration.
    let directives = ptx.lines().filter(|l| l.trim_start().starts_with(".maxntid")).count();
    let declared = launch_bounds::declared(ptx).len();
    if directives != declared {
        problems.push(format!(
            "{directives} .maxntid directives for {declared} launch_bounds! declarations"
        ));
    }
    for l in ptx.lines().filter(|l| l.trim_start().starts_with(".extern .func")) {
        problems.push(format!("unresolved function: {}", l.trim()));
    }
    for sym in layout::masks::ALL {
        if !ptx.lines().any(|l| sym.matches_declaration(l)) {
            problems.push(format!("missing .const symbol {}[{}]", sym.name, sym.len));
        }
    }
    let map = tile_map_declaration();
    if !ptx.lines().any(|l| l.trim() == map) {
        problems.push(format!("missing the tile map symbol: {map}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Check(problems))
    }
}

/// The tensor map symbol's declaration (`layout::tile_map`), as the device declares it.
fn tile_map_declaration() -> String {
    use layout::tile_map::{ALIGN, BYTES, SYMBOL};
    format!(".const .align {ALIGN} .b8 {SYMBOL}[{BYTES}];")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with every entry the table names, each with the right parameter, and the
    /// mask symbols: what a correct build produces.
    fn good() -> String {
        let mut s = String::new();
        for sym in layout::masks::ALL {
            s += &format!(".const .align 16 .f32 {}[{}];\n", sym.name, sym.len);
        }
        s += &(tile_map_declaration() + "\n");
        for e in layout::families::expected_entries() {
            let n = e.to_string();
            s += &format!(
                ".visible .entry {n}(\n\t{}\n)\n{{\n\tret;\n}}\n",
                expected_param(&n, e.params())
            );
        }
        s
    }

    #[test]
    fn expected_entries_cover_every_family_and_the_probe() {
        let e = expected_entries();
        for name in [
            "conv1d_basic",
            "conv2d_tiled_in",
            "conv2d_tiled_in_r8",
            "conv1d_fast_r0",
            "conv1d_fast_r16",
            "conv2d_fast_r8",
            "conv3d_tiled_in",
            "conv3d_fast_r3",
            "roofline_fma",
        ] {
            assert!(e.iter().any(|x| x == name), "{name}");
        }
        for absent in ["conv2d_fast_r9", "conv1d_fast", "conv2d_fast", "conv1d_basic_r1"] {
            assert!(!e.iter().any(|x| x == absent), "{absent}");
        }
        let mut d = e.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), e.len(), "entry names are unique");
    }

    #[test]
    fn a_correct_module_passes() {
        let ptx = good();
        check(&ptx).unwrap();
        let names: Vec<_> = const_symbols(&ptx).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["MASK_1D", "MASK_2D", "MASK_3D", "TILE_MAP"]);
    }

    #[test]
    fn a_missing_entry_fails() {
        let bad = good().replace(".visible .entry conv3d_fast_r2(", ".visible .func conv3d_fast_r2(");
        let err = check(&bad).unwrap_err().to_string();
        assert!(err.contains("missing .entry conv3d_fast_r2"), "{err}");
    }

    #[test]
    fn an_entry_the_table_does_not_name_fails() {
        let bad = format!("{}.visible .entry conv2d_fast_r9(\n)\n{{\n}}\n", good());
        let err = check(&bad).unwrap_err().to_string();
        assert!(err.contains("conv2d_fast_r9 is not named by the table"), "{err}");
    }

    #[test]
    fn a_wrong_parameter_list_fails() {
        // The old scalar parameter list of conv1d_basic, or a struct of the wrong size.
        let bad = good().replace(
            &expected_param("conv1d_basic", layout::ParamList::Conv),
            ".param .u64 conv1d_basic_param_0,\n\t.param .u32 conv1d_basic_param_1",
        );
        let err = check(&bad).unwrap_err().to_string();
        assert!(err.contains(".entry conv1d_basic takes"), "{err}");
        let size = layout::ParamList::Conv.size();
        let bad = good().replace(
            &format!("conv2d_basic_r3_param_0[{size}]"),
            &format!("conv2d_basic_r3_param_0[{}]", size - 4),
        );
        assert!(check(&bad).unwrap_err().to_string().contains("conv2d_basic_r3 takes"));
    }

    #[test]
    fn unresolved_functions_and_missing_symbols_fail() {
        let err = check(&format!("{}.extern .func foo(\n", good()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unresolved function"), "{err}");
        let err = check(&good().replace("MASK_3D[3375]", "MASK_3D[343]"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing .const symbol MASK_3D[3375]"), "{err}");
    }

    #[test]
    fn launch_bounds_applied_twice_fail() {
        let declared = format!("// launch_bounds conv2d_fast_r1 256 5\n{}", good());
        let once = launch_bounds::apply(&declared).unwrap();
        check(&once).unwrap();
        let err = check(&launch_bounds::apply(&once).unwrap()).unwrap_err().to_string();
        assert!(
            err.contains("2 .maxntid directives for 1 launch_bounds! declarations"),
            "{err}"
        );
    }

    #[test]
    fn finds_entries_and_their_parameters() {
        let ptx = ".visible .entry k1(\n\t.param .u64 k1_param_0,\n\t.param .u32 k1_param_1\n)\n{\n}\n.visible .entry k2()\n{\n}\n";
        assert_eq!(entries(ptx), vec!["k1", "k2"]);
        assert_eq!(
            entry_params(ptx),
            vec![
                ("k1", vec![".param .u64 k1_param_0", ".param .u32 k1_param_1"]),
                ("k2", vec![])
            ]
        );
    }

    #[test]
    fn warning_blocks_are_collected() {
        let log = "   Compiling kernels-gpu\nwarning: unused variable: `x`\n  --> src/a.rs:1:1\n\nwarning: `kernels-gpu` (lib) generated 1 warning\n";
        assert_eq!(
            warning_blocks(log),
            vec!["warning: unused variable: `x`\n  --> src/a.rs:1:1".to_string()]
        );
    }
}
