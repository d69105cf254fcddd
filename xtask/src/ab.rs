//! A/B timing of builds from different commits in one GPU run. The GPU tool lends a few
//! minutes of device time a session, and two runs minutes apart differ by a few percent,
//! so builds are compared by alternating them in one run:
//! - here, `cargo xtask ab NAME=REF...` builds the roofline report (and any test binaries
//!   `--tests` names, GPU tests compiled in) of each git revision (`.`: the working tree
//!   as it is) in a worktree under `target/ab/`, and packs them with this xtask into
//!   `.ab.txz`;
//! - on the GPU machine, `.ab/xtask ab-run --only FAMILY` runs each build's roofline
//!   report in turn, `--rounds` times, then each build's test binaries once, logs to
//!   `$OUT/ab.log`, and prints every case's median per build beside the first build's.
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::device::{built_executables_in, check, log_dir, logged, strip_and_pack};
use crate::Result;

/// The A/B bundle folder, relative to the repository root (git-ignored).
pub const AB: &str = ".ab";

/// One build to compare: a name for the tables and the revision it is built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// Column name (letters, digits, `-`, `_`).
    pub name: String,
    /// A git revision, or `.` for the working tree as it is.
    pub rev: String,
}

/// Parses `NAME=REV`.
pub fn parse_build(s: &str) -> std::result::Result<Build, String> {
    let (name, rev) = s.split_once('=').ok_or(format!("{s:?}: expected NAME=REV"))?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!("{name:?}: a build name is letters, digits, '-' and '_'"));
    }
    if rev.is_empty() {
        return Err(format!("{s:?}: no revision"));
    }
    Ok(Build {
        name: name.to_string(),
        rev: rev.to_string(),
    })
}

fn git(root: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(root);
    c
}

/// The commit `rev` names, or the working tree's description for `.`.
fn describe(root: &Path, rev: &str) -> Result<String> {
    let head = |r: &str| -> Result<String> {
        let out = git(root).args(["rev-parse", "--short=10", r]).output()?;
        if !out.status.success() {
            return Err(format!("git rev-parse {r}: not a revision").into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    if rev != "." {
        return head(&format!("{rev}^{{commit}}"));
    }
    let dirty = !git(root).args(["status", "--porcelain"]).output()?.stdout.is_empty();
    Ok(format!(
        "{} (working tree{})",
        head("HEAD")?,
        if dirty { ", changed" } else { "" }
    ))
}

/// `cargo xtask ab`: builds every revision's roofline report (and the test binaries
/// `tests` names) and packs them, with this xtask, into `.ab.txz`.
pub fn bundle(root: &Path, builds: &[Build], tests: &[String]) -> Result<()> {
    let mut names: Vec<&str> = builds.iter().map(|b| b.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if builds.len() < 2 || names.len() != builds.len() {
        return Err("give at least two builds, each its own name".into());
    }
    let out = root.join(AB);
    if out.exists() {
        fs::remove_dir_all(&out)?;
    }
    fs::create_dir_all(&out)?;
    // Every worktree shares one cargo target folder: the dependencies build once.
    let shared_target = root.join("target").join("ab").join("cargo");
    let mut listing = String::new();
    for b in builds {
        let commit = describe(root, &b.rev)?;
        let src = if b.rev == "." {
            root.to_path_buf()
        } else {
            // Outside the checkout: cargo, finding no workspace that claims the
            // worktree's kernels-gpu, would walk up into this one's.
            let wt = std::env::temp_dir().join("gpuconv-ab").join(&b.name);
            if wt.exists() {
                let _ = git(root).args(["worktree", "remove", "--force"]).arg(&wt).status();
                let _ = fs::remove_dir_all(&wt);
            }
            let _ = git(root).args(["worktree", "prune"]).status();
            check({
                let mut c = git(root);
                c.args(["worktree", "add", "--detach", "--force"]).arg(&wt).arg(&b.rev);
                c
            })?;
            wt
        };
        println!("ab: building {} from {commit}", b.name);
        let dir = out.join(&b.name);
        fs::create_dir_all(&dir)?;
        let target = (b.rev != ".").then_some(shared_target.as_path());
        let with_target = |args: &[&str]| built_executables_in(&src, args, target, root);
        let bins = with_target(&["build", "--release", "-p", "gpuconv-benches", "--bin", "roofline"])?;
        let roofline = bins
            .iter()
            .find(|e| e.name == "roofline")
            .ok_or(format!("{}: no roofline built", b.name))?;
        fs::copy(&roofline.exe, dir.join("roofline"))?;
        for t in tests {
            let exes = with_target(&["test", "--release", "-p", "gpuconv-tests", "--test", t, "--no-run"])?;
            let exe = exes
                .iter()
                .find(|e| &e.name == t)
                .ok_or(format!("{}: no test binary {t}", b.name))?;
            fs::copy(&exe.exe, dir.join(format!("test-{t}")))?;
        }
        listing += &format!("{} {} {commit}\n", b.name, b.rev);
    }
    fs::write(out.join("builds"), &listing)?;
    fs::copy(std::env::current_exe()?, out.join("xtask"))?;
    let exes: Vec<PathBuf> = walk(&out)?
        .into_iter()
        .filter(|e| e.file_name().is_some_and(|n| n != "builds"))
        .collect();
    print!("{listing}");
    let packed = strip_and_pack(root, AB, &exes).map_err(|e| format!("{e}: fewer builds or test binaries"))?;
    let size = fs::metadata(&packed)?.len();
    println!(
        "ab: {} ({size} bytes; the device tool carries 64 MiB)",
        packed.display()
    );
    println!("on the GPU machine: tar xJf {AB}.txz && {AB}/xtask ab-run --only <variant> [--rounds 2]");
    Ok(())
}

/// The files under `dir`, recursively.
fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for e in fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            files.extend(walk(&p)?);
        } else {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// A case of the roofline report's `ours=` lines: variant, kind, size, radius.
type CaseKey = (String, String, String, u32);

/// The times (µs) of the `ours=VARIANT kind=K dim=D n=N r=R us=T ...` lines of a report.
pub fn parse_ours(log: &str) -> Vec<(CaseKey, f64)> {
    log.lines()
        .filter(|l| l.starts_with("ours="))
        .filter_map(|l| {
            let field = |k: &str| {
                l.split_whitespace()
                    .find_map(|f| f.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            };
            let key = (
                field("ours")?.to_string(),
                field("kind")?.to_string(),
                field("n")?.to_string(),
                field("r")?.parse().ok()?,
            );
            Some((key, field("us")?.parse().ok()?))
        })
        .collect()
}

/// The median of `v` (not empty).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The summary table: a row per case, per build the median over the rounds and, after
/// the first build, its ratio to the first build's median.
pub fn summary(names: &[String], times: &BTreeMap<CaseKey, Vec<Vec<f64>>>) -> String {
    let mut s = format!("{:<34} {:>3}", "case (variant kind n)", "r");
    for (i, n) in names.iter().enumerate() {
        s += &format!(" {n:>12}");
        if i > 0 {
            s += &format!(" {:>6}", "ratio");
        }
    }
    s += "\n";
    for ((v, k, n, r), per_build) in times {
        s += &format!("{:<34} {r:>3}", format!("{v} {k} {n}"));
        let first = per_build.first().filter(|t| !t.is_empty()).map(|t| median(t));
        for (i, t) in per_build.iter().enumerate() {
            if t.is_empty() {
                s += &format!(" {:>12}", "-");
                if i > 0 {
                    s += &format!(" {:>6}", "");
                }
                continue;
            }
            let m = median(t);
            s += &format!(" {m:>12.1}");
            if i > 0 {
                s += &match first {
                    Some(f) => format!(" {:>6.3}", m / f),
                    None => format!(" {:>6}", ""),
                };
            }
        }
        s += "\n";
    }
    s + "(median µs over the rounds; ratio: to the first build's median)\n"
}

/// `xtask ab-run` on the GPU machine, from the folder holding `.ab/`: the builds'
/// roofline reports alternating for `rounds` rounds, then their test binaries.
pub fn run(rounds: usize, reps: usize, only: &[String], test_filter: &[String]) -> Result<()> {
    let d = PathBuf::from(AB);
    let listing =
        fs::read_to_string(d.join("builds")).map_err(|e| format!("{AB}/builds: {e} (unpack .ab.txz here)"))?;
    let names: Vec<String> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    let logs = log_dir();
    fs::create_dir_all(&logs)?;
    let log = logs.join("ab.log");
    fs::write(&log, format!("builds:\n{listing}"))?;
    let mut times: BTreeMap<CaseKey, Vec<Vec<f64>>> = BTreeMap::new();
    let mut ok = true;
    for round in 0..rounds {
        for (i, name) in names.iter().enumerate() {
            for only in only {
                println!("===== round {} of {rounds}: {name}, {only}", round + 1);
                let before = fs::read_to_string(&log)?.len();
                let mut c = Command::new(d.join(name).join("roofline"));
                c.args(["--reps", &reps.to_string(), "--no-tables", "--only", only])
                    .args(["--chart", "/tmp/ab.svg"]);
                ok &= logged(c, &log, |l| l.starts_with("ours=") || l.contains("NO GPU"))?;
                for (key, us) in parse_ours(&fs::read_to_string(&log)?[before..]) {
                    let per_build = times.entry(key).or_insert_with(|| vec![Vec::new(); names.len()]);
                    per_build[i].push(us);
                }
            }
        }
    }
    for name in &names {
        for t in walk(&d.join(name))?
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("test-")))
        {
            println!("===== {name}: {}", t.file_name().unwrap().to_string_lossy());
            let mut c = Command::new(&t);
            c.args(["--include-ignored", "--test-threads=1"]).args(test_filter);
            ok &= logged(c, &log, |l| {
                l.starts_with("test result") || l.contains("FAILED") || l.contains("panicked")
            })?;
        }
    }
    let table = summary(&names, &times);
    println!("\n{table}");
    let mut all = fs::read_to_string(&log)?;
    all += &format!("\n{table}");
    fs::write(&log, all)?;
    if ok {
        Ok(())
    } else {
        Err("ab-run: a report or test binary failed (ab.log)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_are_parsed() {
        assert_eq!(
            parse_build("new=HEAD~1").unwrap(),
            Build {
                name: "new".into(),
                rev: "HEAD~1".into()
            }
        );
        assert!(parse_build("new").is_err());
        assert!(parse_build("=HEAD").is_err());
        assert!(parse_build("a b=HEAD").is_err());
        assert!(parse_build("x=").is_err());
    }

    #[test]
    fn ours_lines_are_read_and_summarised() {
        let log = "GPU: H200\nours=image_mma kind=ImageU8 dim=2 n=8192x8192x3 r=1 us=252.0 GBps=800\n\
                   ours=image_mma kind=ImageU8 dim=2 n=8192x8192x3 r=2 us=475.5 GBps=420\nnoise us=3\n";
        let got = parse_ours(log);
        assert_eq!(got.len(), 2);
        let key = (
            "image_mma".to_string(),
            "ImageU8".to_string(),
            "8192x8192x3".to_string(),
            2,
        );
        assert_eq!(got[1], (key.clone(), 475.5));
        let mut times = BTreeMap::new();
        times.insert(key, vec![vec![400.0, 500.0, 450.0], vec![225.0, 200.0]]);
        let s = summary(&["base".into(), "new".into()], &times);
        let row = s.lines().nth(1).unwrap();
        assert!(row.contains("450.0"), "{row}");
        assert!(row.contains("212.5"), "{row}");
        assert!(row.contains("0.472"), "{row}");
    }
}
