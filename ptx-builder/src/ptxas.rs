//! Finding NVIDIA's `ptxas` and assembling the PTX into a cubin with it.
//!
//! ptxas runs without a GPU. It comes from `$PTXAS`, `PATH` or the PyPI wheel
//! `nvidia-cuda-nvcc-cu12` (see `scripts/setup.sh`). `cargo xtask ptxas` uses it to check
//! registers and spills. `host/build.rs` uses it to embed the module as sm_90 SASS, so the
//! driver need not JIT 22 MB of PTX in every process (62 s on the H200's machine).
use std::path::{Path, PathBuf};
use std::process::Command;

/// Finds ptxas: `$PTXAS`, then `PATH`, then the `nvidia-cuda-nvcc-cu12` wheel.
/// Returns the path and where it came from.
pub fn find() -> Result<(PathBuf, &'static str), String> {
    if let Some(p) = std::env::var_os("PTXAS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.components().count() > 1 {
            if p.is_file() {
                return Ok((p, "$PTXAS"));
            }
            return Err(format!("PTXAS={} does not exist", p.display()));
        }
        return in_path(p.as_os_str())
            .map(|p| (p, "$PTXAS via PATH"))
            .ok_or_else(|| format!("PTXAS={} is not in PATH", p.display()));
    }
    if let Some(p) = in_path("ptxas".as_ref()) {
        return Ok((p, "PATH"));
    }
    if let Some(p) = from_pip_wheel() {
        return Ok((p, "pip wheel nvidia-cuda-nvcc-cu12"));
    }
    Err(
        "ptxas not found (looked at $PTXAS, PATH and the python3 package nvidia-cuda-nvcc-cu12).\n  \
         Run scripts/setup.sh (it runs `python3 -m pip install nvidia-cuda-nvcc-cu12`), \
         or set PTXAS=/path/to/ptxas."
            .into(),
    )
}

fn in_path(name: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// `nvidia.cuda_nvcc` is a namespace package (`__file__` is None), so ask for `__path__`.
fn from_pip_wheel() -> Option<PathBuf> {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let out = Command::new(python)
        .args(["-c", "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let p = Path::new(&dir).join("bin").join("ptxas");
    p.is_file().then_some(p)
}

/// Assembles `ptx` for `arch` into `out` (`-O3`, the options the driver's JIT uses by
/// default, on every core). Returns ptxas's version ("ptxas 12.9, V12.9.86").
pub fn assemble_cubin(ptxas: &Path, ptx: &Path, arch: &str, out: &Path) -> Result<String, String> {
    let run = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .args(["-O3", "-split-compile", "0", "-o"])
        .arg(out)
        .arg(ptx)
        .output()
        .map_err(|e| format!("could not run {}: {e}", ptxas.display()))?;
    if !run.status.success() {
        return Err(format!(
            "ptxas failed on {} ({}):\n{}",
            ptx.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    let version = Command::new(ptxas)
        .arg("--version")
        .output()
        .map_err(|e| format!("could not run {}: {e}", ptxas.display()))?;
    let text = String::from_utf8_lossy(&version.stdout).into_owned();
    // "Cuda compilation tools, release 12.9, V12.9.86"
    Ok(text
        .lines()
        .find_map(|l| l.split_once("release "))
        .map_or("ptxas, version unknown".to_string(), |(_, v)| {
            format!("ptxas {}", v.trim())
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-kernel module: ptxas makes an ELF cubin of it and names its version; a broken
    /// module is an error that carries ptxas's message. Needs ptxas (`scripts/setup.sh`
    /// installs it, as for `cargo xtask ptxas`): without one the test fails, saying so.
    #[test]
    fn assembles_a_cubin_and_reports_failures() {
        let (ptxas, _) = find().unwrap_or_else(|e| panic!("{e}"));
        let dir = std::env::temp_dir().join(format!("gpuconv-ptxas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ptx, bad, out) = (dir.join("k.ptx"), dir.join("bad.ptx"), dir.join("k.cubin"));
        std::fs::write(
            &ptx,
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n",
        )
        .unwrap();
        let version = assemble_cubin(&ptxas, &ptx, "sm_90", &out).unwrap();
        assert!(version.starts_with("ptxas 1"), "{version}");
        assert_eq!(&std::fs::read(&out).unwrap()[..4], b"\x7fELF");
        std::fs::write(
            &bad,
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tnot_an_op;\n}\n",
        )
        .unwrap();
        let err = assemble_cubin(&ptxas, &bad, "sm_90", &dir.join("bad.cubin")).unwrap_err();
        assert!(err.contains("ptxas failed"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
