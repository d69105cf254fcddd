//! Builds the `kernels-gpu` crate into one PTX module and checks it.
//!
//! Fills the role of Rust-CUDA's `cuda_builder` on top of rustc's own nvptx64 backend
//! (see `shared/TOOLCHAIN.md`): `cargo rustc --target nvptx64-nvidia-cuda
//! -Zbuild-std=core -- --emit=asm=<file>` writes a `.s` file that *is* the PTX.
//! `host/build.rs` and `cargo xtask ptx` both call [`build`], so there is exactly one way
//! the device crate gets compiled.
pub mod launch_bounds;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The PTX target architecture used unless told otherwise (the H200 is sm_90).
pub const DEFAULT_ARCH: &str = "sm_90";

/// The `.const` mask symbols the host fills (cudaMemcpyToSymbol), with their length in
/// f32. `kernels-gpu/src/device.rs` declares them; [`check`] proves the two agree.
pub const CONST_SYMBOLS: &[(&str, usize)] = &[(MASK_1D.0, MASK_1D.1), (MASK_2D.0, MASK_2D.1), (MASK_3D.0, MASK_3D.1)];
/// 1D mask symbol: 4095 taps, radius up to 2047.
pub const MASK_1D: (&str, usize) = ("MASK_1D", 4095);
/// 2D mask symbol: 63x63 taps, radius up to 31.
pub const MASK_2D: (&str, usize) = ("MASK_2D", 3969);
/// 3D mask symbol: 15x15x15 taps, radius up to 7.
pub const MASK_3D: (&str, usize) = ("MASK_3D", 3375);

/// Kernel families whose PTX entry name is the family name itself. Add a new
/// single-entry kernel here (one place) and `cargo xtask ptx` starts requiring it.
pub const SINGLE_ENTRIES: &[&str] = &[
    "conv1d_basic",
    "conv1d_const",
    "conv1d_tiled",
    "conv1d_tiled_cached",
    "conv2d_basic",
    "conv2d_const",
    "conv2d_tiled_in",
    "conv2d_tiled_cached",
];

/// Kernel families instantiated once per compile-time radius: `(prefix, max radius)`
/// gives entries `<prefix>_r0 ..= <prefix>_r<max>`.
pub const RADIUS_FAMILIES: &[(&str, usize)] = &[
    ("conv1d_fast", 16),
    ("conv2d_fast", 8),
    // The 2D textbook kernels' compile-time-radius entries (the CUDA C++ twins' `template <int R>`).
    ("conv2d_basic", 8),
    ("conv2d_const", 8),
    ("conv2d_tiled_in", 8),
    ("conv2d_tiled_cached", 8),
];

/// Every `.entry` the PTX module must contain, built from [`SINGLE_ENTRIES`] and
/// [`RADIUS_FAMILIES`]. Lives here, not in the host crate, so GPU-free tools (xtask)
/// can check the PTX without linking libcuda.
pub fn expected_entries() -> Vec<String> {
    let mut out: Vec<String> = SINGLE_ENTRIES.iter().map(|s| s.to_string()).collect();
    for (prefix, max_r) in RADIUS_FAMILIES {
        out.extend((0..=*max_r).map(|r| format!("{prefix}_r{r}")));
    }
    out
}

/// The `.entry` names in `ptx` that are not in `expected`: allowed (someone may have added
/// a kernel), but worth reporting.
pub fn extra_entries<'a>(ptx: &'a str, expected: &[&str]) -> Vec<&'a str> {
    entries(ptx).into_iter().filter(|e| !expected.contains(e)).collect()
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

/// Compiles `kernels-gpu` to PTX and returns the PTX text (also written to `out_file`).
pub fn build(opts: &BuildOptions) -> Result<String, Error> {
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
    if let Some(parent) = opts.out_file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::Io(parent.to_path_buf(), e))?;
    }
    let out = opts.out_file.to_string_lossy().into_owned();
    cmd.current_dir(&opts.crate_dir)
        // target-cpu for every crate, core included, or rustc refuses the ABI mismatch.
        // The unroll threshold stands in for CUDA's `#pragma unroll`: the fast kernels'
        // register-blocked loops must unroll fully, or their accumulator arrays go to
        // local memory (loops with run-time trip counts are not affected).
        .env(
            "RUSTFLAGS",
            format!("-C target-cpu={} -C llvm-args=-unroll-threshold=20000", opts.arch),
        )
        .env("CARGO_TARGET_DIR", &opts.target_dir)
        .args([
            "rustc",
            "--release",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
            "--",
        ])
        .arg(format!("--emit=asm={out}"));
    let output = cmd.output().map_err(Error::Spawn)?;
    if !output.status.success() {
        return Err(Error::Cargo(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    let ptx = std::fs::read_to_string(&opts.out_file).map_err(|e| Error::Io(opts.out_file.clone(), e))?;
    let ptx = launch_bounds::apply(&ptx).map_err(|missing| {
        Error::Check(
            missing
                .into_iter()
                .map(|e| format!("launch_bounds for missing entry {e}"))
                .collect(),
        )
    })?;
    std::fs::write(&opts.out_file, &ptx).map_err(|e| Error::Io(opts.out_file.clone(), e))?;
    Ok(ptx)
}

/// The names of every `.visible .entry` in a PTX module.
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or(rest))
        .collect()
}

/// Checks what the host relies on: each expected entry point is there, no function is
/// left unresolved (`.extern .func`), and every `.const` mask symbol is declared.
pub fn check(ptx: &str, expected_entries: &[&str]) -> Result<(), Error> {
    let found = entries(ptx);
    let mut problems = Vec::new();
    for e in expected_entries {
        if !found.contains(e) {
            problems.push(format!("missing .entry {e}"));
        }
    }
    for l in ptx.lines().filter(|l| l.trim_start().starts_with(".extern .func")) {
        problems.push(format!("unresolved function: {}", l.trim()));
    }
    for (s, len) in CONST_SYMBOLS {
        let decl = format!(".const .align 16 .f32 {s}[{len}];");
        if !ptx.contains(&decl) {
            problems.push(format!("missing .const symbol `{decl}`"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Check(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = ".const .align 16 .f32 MASK_1D[4095];\n.const .align 16 .f32 MASK_2D[3969];\n\
        .const .align 16 .f32 MASK_3D[3375];\n.visible .entry k1(\n.visible .entry k2(\n";

    #[test]
    fn expected_entries_cover_every_family() {
        let e = expected_entries();
        assert_eq!(e.len(), 8 + 17 + 9 + 4 * 9);
        for name in [
            "conv1d_basic",
            "conv2d_tiled_in",
            "conv1d_fast_r0",
            "conv1d_fast_r16",
            "conv2d_fast_r8",
        ] {
            assert!(e.iter().any(|x| x == name), "{name}");
        }
        assert!(!e.iter().any(|x| x == "conv2d_fast_r9"));
    }

    #[test]
    fn reports_extra_entries_and_const_symbols() {
        assert_eq!(extra_entries(SAMPLE, &["k1"]), vec!["k2"]);
        let names: Vec<_> = const_symbols(SAMPLE).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["MASK_1D", "MASK_2D", "MASK_3D"]);
    }

    #[test]
    fn finds_entries() {
        assert_eq!(entries(SAMPLE), vec!["k1", "k2"]);
    }

    #[test]
    fn check_reports_missing_entry_and_extern() {
        assert!(check(SAMPLE, &["k1", "k2"]).is_ok());
        let bad = format!("{SAMPLE}.extern .func foo(\n");
        let err = check(&bad, &["k1", "k3"]).unwrap_err().to_string();
        assert!(err.contains("missing .entry k3"), "{err}");
        assert!(err.contains("unresolved function"), "{err}");
        assert!(check(".visible .entry k1(\n", &["k1"]).is_err());
    }
}
