//! Device chores. The GPU machine has no Rust toolchain: `cargo xtask bundle` builds every
//! binary a GPU run needs here, with the GPU tests compiled in, into `.dc1/` (with this
//! xtask binary itself and the peers' sources) and packs it as `.dc1.txz`; on the GPU
//! machine `.dc1/xtask device PART...` runs the parts and writes their logs to `$OUT`.
//! Every part's exit status counts: the run fails if any test binary, program or
//! sanitizer check does.
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::Result;

/// The bundle folder, relative to the repository root (git-ignored).
pub const BUNDLE: &str = ".dc1";

/// What `device` can run, in the order given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Every test binary with `--include-ignored --test-threads=1`.
    Tests,
    /// compute-sanitizer memcheck, racecheck, synccheck and initcheck over every entry.
    Sanitize,
    /// The main job on its built-in default input.
    Main,
    /// The roofline report.
    Roofline,
    /// The criterion benches.
    Criterion,
    /// The peers (CUDA C++, NPP, cuDNN, CuPy) on the same GPU, in the same run.
    Peers,
    /// Nsight Compute on the kernels `--ncu-kernels` names (a regex), from a roofline run
    /// of the variants `--ncu-only` names: evidence for a miss.
    Ncu,
}

/// The sanitizer tools, and the summary line each prints.
const TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs `cmd`, failing with its name if it cannot start or exits non-zero.
pub(crate) fn check(mut cmd: Command) -> Result<()> {
    let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !status.success() {
        return Err(format!("{cmd:?} failed: {status}").into());
    }
    Ok(())
}

/// An executable cargo reports building.
pub(crate) struct Built {
    /// Target name.
    pub(crate) name: String,
    /// Package id.
    package: String,
    /// Target kinds (`lib`, `bin`, `test`, `bench`).
    kinds: Vec<String>,
    /// The file.
    pub(crate) exe: PathBuf,
}

/// The executables cargo reports building in a `--message-format=json` run of `args`.
pub(crate) fn built_executables(root: &Path, args: &[&str]) -> Result<Vec<Built>> {
    built_executables_in(root, args, None, root)
}

/// As [`built_executables`] for a checkout of another revision at `root`, into the
/// cargo target folder `target` if given, linking against `home`'s CUDA stub (git-ignored,
/// so a fresh worktree lacks it).
pub(crate) fn built_executables_in(
    root: &Path,
    args: &[&str],
    target: Option<&Path>,
    home: &Path,
) -> Result<Vec<Built>> {
    let mut cmd = cargo();
    if let Some(t) = target {
        cmd.env("CARGO_TARGET_DIR", t);
    }
    cmd.env("CUDA_LIBRARY_PATH", home.join("tools").join("cuda-link"));
    let out = cmd
        .current_dir(root)
        .env("GPUCONV_GPU_TESTS", "1")
        .args(args)
        .arg("--message-format=json")
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")).into());
    }
    let mut exes = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        if let Some(exe) = msg["executable"].as_str() {
            exes.push(Built {
                name: msg["target"]["name"].as_str().unwrap_or("?").to_string(),
                package: msg["package_id"].as_str().unwrap_or("").to_string(),
                kinds: msg["target"]["kind"]
                    .as_array()
                    .map(|k| k.iter().filter_map(|v| v.as_str().map(String::from)).collect())
                    .unwrap_or_default(),
                exe: PathBuf::from(exe),
            });
        }
    }
    Ok(exes)
}

/// `cargo xtask bundle`: builds (GPU tests compiled in) the main job, the roofline report,
/// the criterion bench, the sanitize program, every test binary of the library and its
/// test crate, and this xtask; copies them and the peers' sources into `.dc1/`, strips
/// them, and packs `.dc1.txz` (the PTX and cubin embedded in every binary compress well).
pub fn bundle(root: &Path) -> Result<()> {
    let out = root.join(BUNDLE);
    if out.exists() {
        fs::remove_dir_all(&out)?;
    }
    fs::create_dir_all(out.join("tests"))?;
    fs::create_dir_all(out.join("peers"))?;
    let copy = |from: &Path, to: PathBuf| -> Result<()> {
        fs::copy(from, &to).map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))?;
        Ok(())
    };
    let bins = built_executables(
        root,
        &[
            "build",
            "--release",
            "-p",
            "gpuconv",
            "-p",
            "gpuconv-benches",
            "-p",
            "gpuconv-tests",
            "-p",
            "xtask",
            "--bins",
        ],
    )?;
    for b in &bins {
        if ["gpuconv", "roofline", "sanitize", "xtask"].contains(&b.name.as_str()) {
            copy(&b.exe, out.join(&b.name))?;
        }
    }
    for b in built_executables(
        root,
        &["bench", "-p", "gpuconv-benches", "--bench", "variants", "--no-run"],
    )? {
        if b.name == "variants" {
            copy(&b.exe, out.join("criterion_variants"))?;
        }
    }
    let tests = built_executables(
        root,
        &["test", "--release", "-p", "gpuconv", "-p", "gpuconv-tests", "--no-run"],
    )?;
    for b in tests
        .into_iter()
        .filter(|b| b.kinds.iter().any(|k| k == "lib" || k == "test"))
    {
        // The library's unit tests are named after the crate.
        let file = if b.name == "gpuconv" && b.package.contains("host") {
            "host_unit".to_string()
        } else {
            b.name
        };
        copy(&b.exe, out.join("tests").join(file))?;
    }
    let peers = [root.join("../shared/peers"), root.join("shared/peers")]
        .into_iter()
        .find(|p| p.is_dir())
        .ok_or("no shared/peers next to or inside the checkout")?;
    for e in fs::read_dir(&peers)? {
        let p = e?.path();
        if p.is_file() {
            copy(&p, out.join("peers").join(p.file_name().unwrap()))?;
        }
    }
    let mut exes = Vec::new();
    for e in fs::read_dir(&out)?.chain(fs::read_dir(out.join("tests"))?) {
        let p = e?.path();
        if p.is_file() && p.extension().is_none() {
            exes.push(p);
        }
    }
    let packed = strip_and_pack(root, BUNDLE, &exes)?;
    println!("bundle: {} ({} bytes)", packed.display(), fs::metadata(&packed)?.len());
    println!("on the GPU machine: tar xJf {BUNDLE}.txz && {BUNDLE}/xtask device tests sanitize main roofline peers criterion");
    Ok(())
}

/// Strips the executables `exes` (symbols are of no use on the GPU machine) and packs the
/// folder `folder` of `root` as `folder.txz`, which it returns. xz, not gzip: every
/// binary embeds the PTX and the cubin, and what the device tool carries must stay under
/// 64 MiB (the whole bundle: about 70 MB as gzip, 32 MB as xz). Fails above 64 MiB.
pub(crate) fn strip_and_pack(root: &Path, folder: &str, exes: &[PathBuf]) -> Result<PathBuf> {
    for p in exes {
        check({
            let mut c = Command::new("strip");
            c.arg(p);
            c
        })?;
    }
    let packed = root.join(format!("{folder}.txz"));
    check({
        let mut c = Command::new("tar");
        c.current_dir(root)
            .env("XZ_OPT", "-T0")
            .arg("cJf")
            .arg(&packed)
            .arg(folder);
        c
    })?;
    let size = fs::metadata(&packed)?.len();
    if size > 64 << 20 {
        return Err(format!(
            "{} is {size} bytes, over the 64 MiB the device tool carries",
            packed.display()
        )
        .into());
    }
    Ok(packed)
}

/// The folder logs go to: `$OUT` (the device tool's return folder) or a temporary one.
pub(crate) fn log_dir() -> PathBuf {
    std::env::var_os("OUT").map_or_else(|| PathBuf::from("/tmp/gpuconv-logs"), PathBuf::from)
}

/// Runs `cmd`, appending its stdout and stderr to `log`, echoing the lines `show` picks
/// to this process's stdout. Returns whether it succeeded.
pub(crate) fn logged(mut cmd: Command, log: &Path, show: impl Fn(&str) -> bool) -> Result<bool> {
    let mut file = fs::OpenOptions::new().create(true).append(true).open(log)?;
    writeln!(file, "\n$ {cmd:?}")?;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let err = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || BufReader::new(err).lines().map_while(|l| l.ok()).collect::<Vec<_>>());
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        writeln!(file, "{line}")?;
        if show(&line) {
            println!("{line}");
        }
    }
    for line in err_thread.join().expect("stderr reader") {
        writeln!(file, "{line}")?;
        if show(&line) {
            println!("{line}");
        }
    }
    let status = child.wait()?;
    writeln!(file, "# exit: {status}")?;
    if !status.success() {
        println!("!!! {cmd:?} FAILED: {status}");
    }
    Ok(status.success())
}

/// Whether a sanitizer log reports nothing: every `ERROR SUMMARY` and `RACECHECK
/// SUMMARY` line says 0, and there is at least one.
pub fn sanitizer_clean(log: &str) -> bool {
    let summaries: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("ERROR SUMMARY:") || l.contains("RACECHECK SUMMARY:"))
        .collect();
    !summaries.is_empty()
        && summaries.iter().all(|l| {
            let after = l.split("SUMMARY:").nth(1).unwrap_or("").trim();
            after.starts_with("0 errors") || after.starts_with("0 hazards")
        })
}

/// `xtask device PART...`: runs the parts from the bundle (the working directory holds
/// `.dc1/`), logs in `$OUT`; fails if any part failed. `sanitize`: the tools and the
/// families it runs (all of either if none given). `pack`: [`pack_logs`] at the end.
pub fn run(parts: &[Part], sanitize: (&[String], &[String]), ncu: (&str, &str), pack: bool) -> Result<()> {
    let tools = sanitize.0;
    let d = PathBuf::from(BUNDLE);
    let logs = log_dir();
    fs::create_dir_all(&logs)?;
    let mut smi = Command::new("nvidia-smi");
    smi.args([
        "--query-gpu=name,driver_version,clocks.max.sm,memory.total",
        "--format=csv",
    ]);
    logged(smi, &logs.join("gpu.txt"), |_| true)?;
    let mut failed = Vec::new();
    for &part in parts {
        println!("===== {part:?}");
        let ok = match part {
            Part::Tests => {
                let mut ok = true;
                let mut bins: Vec<PathBuf> = fs::read_dir(d.join("tests"))?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<std::io::Result<_>>()?;
                bins.sort();
                for bin in bins {
                    println!("----- {}", bin.file_name().unwrap().to_string_lossy());
                    let mut c = Command::new(&bin);
                    c.args(["--include-ignored", "--test-threads=1"]);
                    // The CLI tests run the bundled binary, not the build machine's path.
                    c.env("GPUCONV_BIN", std::fs::canonicalize(d.join("gpuconv"))?);
                    ok &= logged(c, &logs.join("tests.log"), |l| {
                        l.starts_with("test result")
                            || l.contains("FAILED")
                            || l.contains("panicked")
                            || l.contains("!!! GPU")
                    })?;
                }
                ok
            }
            Part::Sanitize => {
                let mut ok = true;
                let chosen: Vec<&str> = TOOLS
                    .into_iter()
                    .filter(|t| tools.is_empty() || tools.iter().any(|c| c == t))
                    .collect();
                for &tool in &chosen {
                    let log = logs.join(format!("sanitize-{tool}.log"));
                    let _ = fs::remove_file(&log);
                    let mut c = Command::new("compute-sanitizer");
                    c.args(["--tool", tool, "--error-exitcode", "1", "--print-limit", "20"]);
                    if tool == "racecheck" {
                        c.args(["--racecheck-report", "all"]);
                    }
                    c.arg(d.join("sanitize")).args(sanitize.1);
                    let ran = logged(c, &log, |l| {
                        l.contains("SUMMARY") || l.starts_with("sanitize:") || l.starts_with("FAILED")
                    })?;
                    let clean = sanitizer_clean(&fs::read_to_string(&log)?);
                    println!("{tool}: {}", if ran && clean { "clean" } else { "REPORTED PROBLEMS" });
                    ok &= ran && clean;
                }
                // One file back instead of four (the device tool returns 8 at most).
                let mut all = fs::read_to_string(logs.join("sanitize.log")).unwrap_or_default();
                for tool in chosen {
                    let p = logs.join(format!("sanitize-{tool}.log"));
                    all += &fs::read_to_string(&p)?;
                    fs::remove_file(p)?;
                }
                fs::write(logs.join("sanitize.log"), all)?;
                ok
            }
            Part::Main => logged(Command::new(d.join("gpuconv")), &logs.join("main.log"), |_| true)?,
            Part::Roofline => {
                let mut c = Command::new(d.join("roofline"));
                c.arg("--chart").arg(logs.join("roofline.svg"));
                // Beside the peers of the same run, when they ran first.
                if logs.join("peers.log").exists() {
                    c.arg("--peers").arg(logs.join("peers.log"));
                }
                logged(c, &logs.join("roofline.log"), |_| true)?
            }
            Part::Ncu => {
                let mut c = Command::new("ncu");
                c.args([
                    "--section",
                    "SpeedOfLight",
                    "--section",
                    "Occupancy",
                    "--section",
                    "LaunchStats",
                ])
                .args([
                    "--section",
                    "SchedulerStats",
                    "--section",
                    "WarpStateStats",
                    "--section",
                    "InstructionStats",
                ])
                .args(["--section", "MemoryWorkloadAnalysis", "-c", "12", "-k"])
                .arg(format!("regex:{}", ncu.0))
                .arg(d.join("roofline"))
                .args(["--reps", "1", "--no-tables", "--only", ncu.1, "--chart", "/tmp/ncu.svg"]);
                logged(c, &logs.join("ncu.log"), |l| {
                    l.contains("==PROF==") || l.contains("Duration") || l.contains("Throughput")
                })?
            }
            Part::Criterion => {
                let mut c = Command::new(d.join("criterion_variants"));
                c.arg("--bench");
                logged(c, &logs.join("criterion.log"), |l| {
                    l.contains("time:") || l.starts_with("conv")
                })?
            }
            Part::Peers => {
                let log = logs.join("peers.log");
                let mut ok = true;
                for (src, libs) in [
                    ("conv_peers.cu", &[][..]),
                    ("conv3d_peers.cu", &[]),
                    ("npp_peers.cu", &["-lnppif", "-lnppc"]),
                ] {
                    let exe = PathBuf::from("/tmp").join(src.trim_end_matches(".cu"));
                    let mut nvcc = Command::new("nvcc");
                    nvcc.args(["-O3", "-arch=sm_90", "-std=c++17", "-o"])
                        .arg(&exe)
                        .arg(d.join("peers").join(src))
                        .args(libs);
                    ok &= logged(nvcc, &log, |l| l.contains("error")).unwrap_or(false)
                        && logged(Command::new(&exe), &log, |_| true)?;
                }
                for py in ["lib_peers.py", "lib_peers_more.py"] {
                    let mut c = Command::new("python3");
                    c.env("PYTHONUNBUFFERED", "1").arg(d.join("peers").join(py));
                    ok &= logged(c, &log, |_| true)?;
                }
                ok
            }
        };
        if !ok {
            failed.push(part);
        }
        println!("===== {part:?}: {}", if ok { "ok" } else { "FAILED" });
    }
    if pack {
        pack_logs(&logs)?;
    }
    if failed.is_empty() {
        println!("device run: every part ok");
        Ok(())
    } else {
        Err(format!("device run: failed parts {failed:?}").into())
    }
}

/// Packs the files of `logs` into `logs/logs.tgz` (`logs-2.tgz`, ... where an earlier
/// run's pack is there, which stays, as do folders) and removes them. A run cut short
/// leaves its logs as they are.
pub(crate) fn pack_logs(logs: &Path) -> Result<()> {
    let is_pack = |n: &str| n.starts_with("logs") && n.ends_with(".tgz");
    let mut names: Vec<String> = Vec::new();
    for e in fs::read_dir(logs)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type()?.is_file() && !is_pack(&name) {
            names.push(name);
        }
    }
    names.sort();
    let pack = (1..)
        .map(|k| {
            if k == 1 {
                "logs.tgz".to_string()
            } else {
                format!("logs-{k}.tgz")
            }
        })
        .find(|n| !logs.join(n).exists())
        .expect("a free name");
    check({
        let mut c = Command::new("tar");
        c.current_dir(logs).arg("czf").arg(&pack).args(&names);
        c
    })?;
    for n in &names {
        fs::remove_file(logs.join(n))?;
    }
    println!("logs: {} files packed into {}", names.len(), logs.join(&pack).display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_logs_packs_files_and_leaves_folders() {
        let dir = std::env::temp_dir().join(format!("gpuconv-pack-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a.log"), "a").unwrap();
        fs::write(dir.join("b.svg"), "b").unwrap();
        pack_logs(&dir).unwrap();
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["logs.tgz", "sub"]);
        // The names a pack holds, in order.
        let listed = |pack: &str| {
            let out = Command::new("tar").arg("tzf").arg(dir.join(pack)).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(listed("logs.tgz"), "a.log\nb.svg\n");
        // A second run's logs go beside the first pack, which stays as it was.
        fs::write(dir.join("c.log"), "c").unwrap();
        pack_logs(&dir).unwrap();
        assert_eq!(listed("logs-2.tgz"), "c.log\n");
        assert_eq!(listed("logs.tgz"), "a.log\nb.svg\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sanitizer_summaries_are_read() {
        assert!(sanitizer_clean("========= ERROR SUMMARY: 0 errors\n"));
        assert!(sanitizer_clean(
            "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
        ));
        assert!(!sanitizer_clean("========= ERROR SUMMARY: 3 errors\n"));
        assert!(!sanitizer_clean(
            "========= RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)\n"
        ));
        assert!(
            !sanitizer_clean("the program crashed before any summary\n"),
            "no summary is not clean"
        );
    }
}
