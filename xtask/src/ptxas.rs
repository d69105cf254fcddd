//! `cargo xtask ptxas`: assemble the PTX with NVIDIA's `ptxas -v` and judge its report.
//!
//! rustc's nvptx backend stops at PTX; only ptxas turns it into SASS, and only then do we
//! learn register counts and whether anything spilled to local memory. A spill in a fast
//! kernel (e.g. a register-blocked accumulator array that did not unroll) is a silent
//! performance bug, so any spill fails the check. ptxas runs without a GPU, so CI can do
//! this; it comes from the PyPI wheel `nvidia-cuda-nvcc-cu12` (see scripts/setup.sh).
use std::cmp::Ordering;
use std::path::Path;
use std::process::Command;

use crate::Result;

/// What ptxas reported for one function (an `.entry` kernel or a non-inlined `.func`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FnStats {
    pub name: String,
    /// `.entry` (has a "Compiling entry function" line) rather than a `.func`.
    pub is_entry: bool,
    pub registers: Option<u32>,
    pub barriers: Option<u32>,
    pub stack_frame: u64,
    pub spill_stores: u64,
    pub spill_loads: u64,
    /// Static shared memory; dynamic (`.extern .shared`) memory is sized at launch, not here.
    pub smem: u64,
    /// Sum of `cmem[N]` bytes. ptxas 12.9 prints none for sm_90, hence `Option`.
    pub cmem: Option<u64>,
}

impl FnStats {
    pub fn spills(&self) -> bool {
        self.spill_stores > 0 || self.spill_loads > 0
    }
}

/// A parsed `ptxas -v` log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// In the order ptxas printed them.
    pub functions: Vec<FnStats>,
    /// Module-wide line, e.g. `0 bytes gmem, 400 bytes cmem[3]`.
    pub module: Option<String>,
    /// `ptxas warning`/`error`/`fatal` lines, verbatim.
    pub diagnostics: Vec<String>,
}

impl Report {
    fn get_or_insert(&mut self, name: &str) -> &mut FnStats {
        let i = match self.functions.iter().position(|f| f.name == name) {
            Some(i) => i,
            None => {
                self.functions.push(FnStats {
                    name: name.to_string(),
                    ..Default::default()
                });
                self.functions.len() - 1
            }
        };
        &mut self.functions[i]
    }

    pub fn entries(&self) -> impl Iterator<Item = &FnStats> {
        self.functions.iter().filter(|f| f.is_entry)
    }
}

/// Text between the first pair of single quotes.
fn quoted(s: &str) -> Option<&str> {
    let start = s.find('\'')? + 1;
    let len = s[start..].find('\'')?;
    Some(&s[start..start + len])
}

/// Splits `"1024 bytes smem"` into `(1024, "smem")`.
fn bytes_item(item: &str) -> Option<(u64, &str)> {
    let (n, rest) = item.trim().split_once(' ')?;
    let what = rest.strip_prefix("bytes ")?;
    Some((n.parse().ok()?, what.trim()))
}

/// Parses the output of `ptxas -v` (stdout and stderr together).
///
/// Shape (CUDA 12.9; older and non-sm_90 targets add `cmem[N]` items):
/// ```text
/// ptxas info    : 0 bytes gmem
/// ptxas info    : Compiling entry function 'k' for 'sm_90'
/// ptxas info    : Function properties for k
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 23 registers, used 1 barriers, 1024 bytes smem
/// ```
/// The "Used" line belongs to the entry last being compiled; the stack/spill line to the
/// function whose properties were last announced (an entry or a `.func`).
pub fn parse(log: &str) -> Report {
    let mut report = Report::default();
    let mut compiling: Option<String> = None;
    let mut props_for: Option<String> = None;
    for raw in log.lines() {
        let line = raw.trim();
        if line.starts_with("ptxas warning") || line.starts_with("ptxas error") || line.starts_with("ptxas fatal") {
            report.diagnostics.push(line.to_string());
            continue;
        }
        if let Some(msg) = line
            .strip_prefix("ptxas info")
            .map(|r| r.trim_start().trim_start_matches(':').trim())
        {
            if msg.starts_with("Compiling entry function") {
                if let Some(name) = quoted(msg) {
                    report.get_or_insert(name).is_entry = true;
                    compiling = Some(name.to_string());
                }
            } else if let Some(name) = msg.strip_prefix("Function properties for ") {
                let name = name.trim();
                report.get_or_insert(name);
                props_for = Some(name.to_string());
            } else if let Some(rest) = msg.strip_prefix("Used ") {
                let Some(name) = compiling.clone() else { continue };
                let f = report.get_or_insert(&name);
                let mut items = rest.split(',');
                f.registers = items.next().and_then(|s| s.split_whitespace().next()?.parse().ok());
                for item in items {
                    let item = item.trim();
                    if let Some(b) = item.strip_prefix("used ").and_then(|s| s.strip_suffix(" barriers")) {
                        f.barriers = b.trim().parse().ok();
                    } else if let Some((n, what)) = bytes_item(item) {
                        if what == "smem" {
                            f.smem += n;
                        } else if what.starts_with("cmem[") {
                            *f.cmem.get_or_insert(0) += n;
                        }
                    }
                }
            } else if msg.contains("bytes gmem") {
                report.module = Some(msg.to_string());
            }
            continue;
        }
        if line.contains("bytes stack frame") {
            let Some(name) = props_for.clone() else { continue };
            let f = report.get_or_insert(&name);
            for (n, what) in line.split(',').filter_map(bytes_item) {
                match what {
                    "stack frame" => f.stack_frame = n,
                    "spill stores" => f.spill_stores = n,
                    "spill loads" => f.spill_loads = n,
                    _ => {}
                }
            }
        }
    }
    report
}

/// Orders names with their digit runs compared as numbers: `conv1d_fast_r2` before `_r10`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, sa), (db, sb)) in ca.iter().zip(cb.iter()) {
        let o = if *da && *db {
            let (ta, tb) = (sa.trim_start_matches('0'), sb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            sa.cmp(sb)
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// The per-function table, sorted by name (numbers in names compared as numbers).
pub fn table(report: &Report) -> String {
    let mut fns: Vec<&FnStats> = report.functions.iter().collect();
    fns.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    let w = fns.iter().map(|f| f.name.len()).max().unwrap_or(0).max("kernel".len());
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut out = format!(
        "{:<w$}  {:>4}  {:>8}  {:>8}  {:>6}  {:>6}  {:>5}  {:>4}\n",
        "kernel", "regs", "spill st", "spill ld", "smem", "cmem", "stack", "bar"
    );
    for f in fns {
        let name = if f.is_entry {
            f.name.clone()
        } else {
            format!("{} (.func)", f.name)
        };
        out += &format!(
            "{:<w$}  {:>4}  {:>8}  {:>8}  {:>6}  {:>6}  {:>5}  {:>4}{}\n",
            name,
            opt(f.registers.map(u64::from)),
            f.spill_stores,
            f.spill_loads,
            f.smem,
            opt(f.cmem),
            f.stack_frame,
            opt(f.barriers.map(u64::from)),
            if f.spills() { "  <-- SPILLS" } else { "" },
        );
    }
    out
}

/// Runs `ptxas -v` for `arch` on `ptx_path` and on a copy of it with every baked entry's
/// taps baked in (`ptx_builder::bake`, the module the host JITs per mask, here with one
/// pseudo-random mask: immediates change what ptxas allocates), both at once. Prints
/// each table; fails if ptxas fails, if a report misses an entry of the PTX (the parser
/// no longer understands it), or if any function spills.
pub fn run(ptx_path: &Path, arch: &str) -> Result<()> {
    let (ptxas, source) = ptx_builder::ptxas::find()?;
    println!("ptxas:     {} (from {source})", ptxas.display());
    let ptx = std::fs::read_to_string(ptx_path).map_err(|e| format!("{}: {e}", ptx_path.display()))?;
    let baked_path = ptx_path.with_extension("baked.ptx");
    let entries = ptx_builder::bake::baked_entries();
    let pairs: Vec<(&str, &str)> = entries.iter().map(|(e, s, _)| (e.as_str(), *s)).collect();
    let level = |entry: &str| {
        entries
            .iter()
            .find(|(e, _, _)| e == entry)
            .map_or(DEFAULT_LEVEL, |&(_, _, l)| l)
    };
    // Taps in (-1, 1) from a fixed LCG: no 0 or 1 that ptxas could fold away.
    let mut x = 0x2545_f491u32;
    let taps: Vec<f32> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((x >> 8) as f32 / (1u32 << 24) as f32) * 1.98 - 0.99
        })
        .collect();
    let parsed = ptx_builder::bake::Ptx::parse(&ptx);
    let (baked, report) = parsed.bake_module(&pairs, &taps);
    // The host bakes an entry only where every tap load became its tap (a radius whose
    // taps run in a loop keeps the symbol); those entries stay as they were here.
    let kept: Vec<String> = report
        .iter()
        .filter(|&&(_, b, l)| !ptx_builder::bake::complete(b, l))
        .map(|((e, _), b, l)| format!("{e} ({b} baked, {l} left)"))
        .collect();
    if report.len() != pairs.len() {
        return Err(format!("{} of {} baked entries found in the PTX", report.len(), pairs.len()).into());
    }
    std::fs::write(&baked_path, &baked).map_err(|e| format!("{}: {e}", baked_path.display()))?;
    let (main, with_taps) = std::thread::scope(|s| {
        let b = s.spawn(|| assemble(&ptxas, &baked_path, arch, DEFAULT_LEVEL).map_err(|e| e.to_string()));
        (
            assemble(&ptxas, ptx_path, arch, DEFAULT_LEVEL),
            b.join()
                .expect("ptxas thread")
                .map_err(Box::<dyn std::error::Error>::from),
        )
    });
    judge(&main?, &ptx, arch, "")?;
    println!();
    println!(
        "ptxas on {} ({} entries with their taps baked in; kept on the symbol: {}):",
        baked_path.display(),
        report.len() - kept.len(),
        if kept.is_empty() {
            "none".to_string()
        } else {
            kept.join(", ")
        }
    );
    judge(&with_taps?, &baked, arch, " (taps baked in)")?;
    let singles: Vec<(&str, &str, u32)> = report
        .iter()
        .filter(|&&(_, b, l)| ptx_builder::bake::complete(b, l))
        .map(|&((entry, sym), _, _)| (entry, sym, level(entry)))
        .collect();
    assemble_singles(&ptxas, &parsed, &singles, &taps, ptx_path, arch)?;
    println!("ptxas check: ok");
    Ok(())
}

/// Assembles the module the host JITs for each of `entries` (`bake_entry`: the entry,
/// what it calls, the declarations) at the level the host has the driver build it, so
/// that a module missing a piece, or spilling at that level, fails here rather than at
/// the driver's JIT; several ptxas at once.
fn assemble_singles(
    ptxas: &Path,
    ptx: &ptx_builder::bake::Ptx<'_>,
    entries: &[(&str, &str, u32)],
    taps: &[f32],
    ptx_path: &Path,
    arch: &str,
) -> Result<()> {
    let dir = ptx_path.with_extension("baked");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let failed: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = entries
            .chunks(entries.len().div_ceil(threads).max(1))
            .map(|chunk| {
                let dir = &dir;
                s.spawn(move || {
                    let mut failed = Vec::new();
                    for &(entry, sym, level) in chunk {
                        let path = dir.join(format!("{entry}.ptx"));
                        let ok = ptx
                            .bake_entry(entry, sym, taps)
                            .ok_or_else(|| "no such entry".to_string())
                            .and_then(|b| std::fs::write(&path, b.ptx).map_err(|e| e.to_string()))
                            .and_then(|()| assemble(ptxas, &path, arch, level).map_err(|e| e.to_string()))
                            .and_then(
                                |r| match (r.entries().count(), r.functions.iter().any(FnStats::spills)) {
                                    (1, false) => Ok(()),
                                    (1, true) => Err(format!("spills at JIT level {level}")),
                                    (n, _) => Err(format!("{n} entries")),
                                },
                            );
                        if let Err(e) = ok {
                            failed.push(format!("{entry}: {e}"));
                        }
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("ptxas thread"))
            .collect()
    });
    let other: Vec<String> = (entries.iter())
        .filter(|&&(_, _, l)| l != DEFAULT_LEVEL)
        .map(|&(e, _, l)| format!("{e} at -O{}", ptxas_opt(l)))
        .collect();
    println!(
        "ptxas:     {} one-entry baked modules (as the host JITs them) in {}: {} failed (at -O3 but {})",
        entries.len(),
        dir.display(),
        failed.len(),
        if other.is_empty() {
            "none".to_string()
        } else {
            other.join(", ")
        }
    );
    if !failed.is_empty() {
        return Err(format!("baked one-entry modules failed:\n{}", failed.join("\n")).into());
    }
    Ok(())
}

/// The driver JIT's default optimization level (`layout::family::DEFAULT_JIT_LEVEL`),
/// which is ptxas's `-O3`.
const DEFAULT_LEVEL: u32 = layout::family::DEFAULT_JIT_LEVEL;

/// ptxas's `-O` for the driver JIT's optimization `level` (0 to 4): ptxas takes 0 to 3,
/// and the JIT's 4 is its 3.
fn ptxas_opt(level: u32) -> u32 {
    level.min(3)
}

/// `ptxas -v -arch=<arch>` on one file at the driver JIT's optimization `level`
/// ([`ptxas_opt`]): its parsed report, or its log if it failed.
fn assemble(ptxas: &Path, path: &Path, arch: &str, level: u32) -> Result<Report> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(format!("-O{}", ptxas_opt(level)))
        .args(["-v", "-o", "/dev/null"])
        .arg(path)
        .output()
        .map_err(|e| format!("could not run {}: {e}", ptxas.display()))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!("ptxas failed on {} ({}):\n{log}", path.display(), out.status).into());
    }
    Ok(parse(&log))
}

/// Prints a report's table and fails on a missing entry or a spill.
fn judge(report: &Report, ptx: &str, arch: &str, what: &str) -> Result<()> {
    print!("{}", table(report));
    if let Some(m) = &report.module {
        println!("module:    {m}");
    }
    println!("           smem = static shared memory only (dynamic shared memory is sized per launch)");
    if report.functions.iter().all(|f| f.cmem.is_none()) {
        println!("           cmem = not reported by this ptxas for {arch}");
    }
    for d in &report.diagnostics {
        println!("{d}");
    }
    let missing: Vec<&str> = ptx_builder::entries(ptx)
        .into_iter()
        .filter(|e| !report.entries().any(|f| f.name == *e))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "ptxas -v output{what} has no report for: {} (parser out of date?)",
            missing.join(", ")
        )
        .into());
    }
    let mut spilling: Vec<&str> = report
        .functions
        .iter()
        .filter(|f| f.spills())
        .map(|f| f.name.as_str())
        .collect();
    spilling.sort_by(|a, b| natural_cmp(a, b));
    let max_regs = report.entries().filter_map(|f| f.registers).max().unwrap_or(0);
    println!(
        "ptxas{what}: {} entries, max {max_regs} registers, {} spilling",
        report.entries().count(),
        spilling.len()
    );
    if !spilling.is_empty() {
        return Err(format!("register spills{what} in: {}", spilling.join(", ")).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real `ptxas -arch=sm_90 -v` (CUDA 12.9) output for this repo's kernels.ptx.
    const SM90: &str = include_str!("../testdata/ptxas-v-sm_90.txt");
    /// Real `ptxas -arch=sm_75 -v` output for testdata/smem-cmem-stack.ptx: the items
    /// sm_90 leaves out (cmem, smem, cumulative stack).
    const SM75: &str = include_str!("../testdata/ptxas-v-sm_75-smem-cmem-stack.txt");
    /// Real `ptxas -arch=sm_90 -v -maxrregcount=16` output for kernels.ptx: spills.
    const SPILLS: &str = include_str!("../testdata/ptxas-v-sm_90-maxrreg16.txt");

    #[test]
    fn parses_real_sm90_report() {
        let r = parse(SM90);
        assert_eq!(r.module.as_deref(), Some("0 bytes gmem"));
        assert!(r.diagnostics.is_empty());
        assert_eq!(r.entries().count(), r.functions.len());
        // Every function of the (frozen) report has a register count; 35 entries then.
        assert!(r.functions.iter().all(|f| f.registers.is_some()));
        assert_eq!(r.entries().count(), 35);
        let f = r.functions.iter().find(|f| f.name == "conv2d_fast_r8").unwrap();
        assert_eq!(
            f,
            &FnStats {
                name: "conv2d_fast_r8".into(),
                is_entry: true,
                registers: Some(38),
                barriers: Some(1),
                ..Default::default()
            }
        );
        assert!(!r.functions.iter().any(FnStats::spills));
    }

    #[test]
    fn parses_smem_cmem_and_stack() {
        let r = parse(SM75);
        assert_eq!(r.module.as_deref(), Some("0 bytes gmem, 400 bytes cmem[3]"));
        assert_eq!(
            r.functions,
            vec![FnStats {
                name: "k".into(),
                is_entry: true,
                registers: Some(6),
                barriers: Some(1),
                stack_frame: 1024,
                spill_stores: 0,
                spill_loads: 0,
                smem: 1024,
                cmem: Some(360),
            }]
        );
    }

    #[test]
    fn detects_spills() {
        let r = parse(SPILLS);
        let spilling: Vec<_> = r.functions.iter().filter(|f| f.spills()).collect();
        assert!(!spilling.is_empty());
        assert!(spilling.iter().all(|f| f.stack_frame > 0));
        assert!(table(&r).contains("<-- SPILLS"));
        assert_eq!(
            r.diagnostics,
            vec!["ptxas warning : For profile sm_90 adjusting per thread register count of 16 to lower bound of 24"]
        );
        let f = r.functions.iter().find(|f| f.name == "conv2d_fast_r8").unwrap();
        assert_eq!((f.stack_frame, f.spill_stores, f.spill_loads), (72, 120, 128));
    }

    #[test]
    fn table_is_sorted_naturally() {
        let t = table(&parse(SM90));
        let names: Vec<&str> = t
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        let pos = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(pos("conv1d_basic") < pos("conv1d_fast_r0"));
        assert!(pos("conv1d_fast_r2") < pos("conv1d_fast_r10"));
        assert!(pos("conv1d_fast_r16") < pos("conv1d_tiled"));
        assert!(pos("conv1d_tiled") < pos("conv2d_basic"));
    }

    #[test]
    fn natural_order() {
        assert_eq!(natural_cmp("a_r2", "a_r10"), Ordering::Less);
        assert_eq!(natural_cmp("a_r10", "a_r10"), Ordering::Equal);
        assert_eq!(natural_cmp("a", "a_r0"), Ordering::Less);
        assert_eq!(natural_cmp("b", "a_r0"), Ordering::Greater);
    }

    #[test]
    fn diagnostics_are_kept() {
        let r = parse("ptxas warning : Registers are spilled\nptxas fatal   : Unresolved extern function 'f'\n");
        assert_eq!(r.diagnostics.len(), 2);
        assert!(r.functions.is_empty());
    }
}
