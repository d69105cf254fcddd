//! `cargo xtask`: the GPU-free checks of the kernels.
//!
//! CI machines have no GPU, so GPU tests there can only report "ignored". What CI *can*
//! prove about the kernels is that they compile to PTX with every entry the host launches
//! (`ptx`) and that NVIDIA's own assembler accepts that PTX without register spills
//! (`ptxas`). `ci` runs both. None of this links libcuda, so it works anywhere.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod ab;
mod device;
mod ptx;
mod ptxas;

/// Developer and CI tasks for the gpuconv workspace.
#[derive(Parser)]
#[command(name = "cargo xtask", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build kernels-gpu to PTX (target/ptx/<arch>/kernels.ptx) and check its entries.
    Ptx(ArchArg),
    /// `ptx`, then run ptxas -v on the PTX: per-kernel registers/spills/smem table; fails on spills.
    Ptxas(ArchArg),
    /// Build every binary a GPU run needs (GPU tests compiled in) into `.dc1/` and pack
    /// `.dc1.txz`, for the GPU machine, which has no Rust toolchain.
    Bundle,
    /// On the GPU machine, from the repository root with `.dc1/` unpacked: run the parts,
    /// logs in `$OUT`. Fails if any part fails.
    Device {
        /// Parts, in order.
        #[arg(value_enum, required = true)]
        parts: Vec<device::Part>,
        /// The sanitizer tools `sanitize` runs (memcheck, racecheck, synccheck,
        /// initcheck; all if none given).
        #[arg(long, value_delimiter = ',')]
        tools: Vec<String>,
        /// The kernel families `sanitize` launches (all if none given; `NAME:LO-HI` takes
        /// the entries of compiled radius LO..=HI only).
        #[arg(long, value_delimiter = ',')]
        families: Vec<String>,
        /// `ncu`: the kernels to profile (a regex of entry names).
        #[arg(long, default_value = "conv2d_fast_r4|conv3d_fast_r2")]
        ncu_kernels: String,
        /// `ncu`: the variants the roofline run times (a substring of their names).
        #[arg(long, default_value = "fast")]
        ncu_only: String,
        /// At the end, pack every log into `$OUT/logs.tgz` (`logs-2.tgz`, ... beside an
        /// earlier pack) and remove them: the device tool brings back at most 8 files from
        /// `$OUT`, and a whole run writes more.
        #[arg(long)]
        pack: bool,
    },
    /// Build the roofline report (and the test binaries `--tests` names) of each
    /// revision into `.ab/` and pack `.ab.txz`, to time them alternating in one GPU run.
    Ab {
        /// Test binaries of gpuconv-tests to build per revision (e.g. `images`).
        #[arg(long, value_delimiter = ',')]
        tests: Vec<String>,
        /// `NAME=REV` (a git revision, or `.` for the working tree as it is); the first
        /// is the baseline of the ratios.
        #[arg(required = true, value_parser = ab::parse_build)]
        builds: Vec<ab::Build>,
    },
    /// On the GPU machine, with `.ab/` unpacked: each build's roofline report in turn,
    /// `--rounds` times, then each build's test binaries; a table of the medians.
    AbRun {
        /// Rounds of the builds' reports.
        #[arg(long, default_value_t = 2)]
        rounds: usize,
        /// Timed launches per case.
        #[arg(long, default_value_t = 10)]
        reps: usize,
        /// The variants timed (a substring of their names, as roofline's `--only`; a
        /// comma-separated list runs the report once per item).
        #[arg(long, required = true, value_delimiter = ',')]
        only: Vec<String>,
        /// Passed to the test binaries (a name filter).
        test_filter: Vec<String>,
    },
    /// clippy on the device crate for nvptx64, warnings denied.
    ClippyDevice(ArchArg),
    /// Every GPU-free kernel check CI runs (ptx + ptxas + clippy-device).
    Ci(ArchArg),
}

#[derive(clap::Args)]
struct ArchArg {
    /// PTX target architecture (`-C target-cpu` for rustc, `-arch` for ptxas).
    #[arg(long, default_value = ptx_builder::DEFAULT_ARCH)]
    arch: String,
}

/// Errors are reported as text: every task is a leaf of a shell pipeline.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The workspace root: xtask lives one level below it.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the workspace")
        .to_path_buf()
}

fn run(cli: Cli) -> Result<()> {
    let root = workspace_root();
    match cli.task {
        Task::Ptx(a) => ptx::build_and_check(&root, &a.arch).map(|_| ()),
        Task::Ptxas(a) => {
            let path = ptx::build_and_check(&root, &a.arch)?;
            ptxas::run(&path, &a.arch)
        }
        Task::Ab { tests, builds } => ab::bundle(&root, &builds, &tests),
        Task::AbRun {
            rounds,
            reps,
            only,
            test_filter,
        } => ab::run(rounds, reps, &only, &test_filter),
        Task::ClippyDevice(a) => ptx::clippy(&root, &a.arch),
        Task::Bundle => device::bundle(&root),
        Task::Device {
            parts,
            tools,
            families,
            ncu_kernels,
            ncu_only,
            pack,
        } => device::run(&parts, (&tools, &families), (&ncu_kernels, &ncu_only), pack),
        Task::Ci(a) => {
            let path = ptx::build_and_check(&root, &a.arch)?;
            ptxas::run(&path, &a.arch)?;
            ptx::clippy(&root, &a.arch)
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
