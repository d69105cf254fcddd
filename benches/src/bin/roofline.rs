//! The roofline report: every variant on the issues' benchmark cases (1D, 2D and 3D, one
//! loop), timed with CUDA events (median after warm-up), next to two limits measured in
//! the same run: a device-to-device copy of the same bytes (memory) and the GPU's fp32
//! FMA rate (compute, `(2r+1)^d` FMAs per output). Outputs are spot-checked against the
//! CPU reference.
//!
//! `cargo run --release -p gpuconv-benches --bin roofline`
use clap::Parser;
use gpuconv::{Error, Gpu, Mode, Variant};
use gpuconv_benches as b;

/// Roofline report of every convolution variant on the H200 benchmark cases.
#[derive(Parser)]
#[command(about)]
struct Args {
    /// Divide every side of the cases by this (2: a quick run).
    #[arg(long, default_value_t = 1)]
    scale: usize,
    /// Timed launches per case (after 3 warm-ups); the median is reported.
    #[arg(long, default_value_t = 30)]
    reps: usize,
    /// Only variants whose name contains this (e.g. "fast", "conv3d").
    #[arg(long, default_value = "")]
    only: String,
    /// Target: time at most this multiple of the roofline limit.
    #[arg(long, default_value_t = 1.25)]
    target: f64,
}

/// One timed case: the row of the report.
struct Row {
    variant: &'static str,
    dim: usize,
    size: String,
    r: usize,
    us: f64,
    bytes: f64,
    copy_us: f64,
    fma_us: f64,
    check: String,
}

impl Row {
    fn limit_us(&self) -> f64 {
        self.copy_us.max(self.fma_us)
    }
    fn print(&self, target: f64) {
        let x = self.us / self.limit_us();
        let verdict = if x <= target { "meets" } else { "misses" };
        println!(
            "{:<20} {} {:>12} {:>3} {:>10.1} {:>7.0} {:>9.1} {:>9.1} {:>6.2} {:>6} {:>6.0}% {}",
            self.variant,
            self.dim,
            self.size,
            self.r,
            self.us,
            self.bytes / self.us / 1e3,
            self.copy_us,
            self.fma_us,
            x,
            verdict,
            100.0 / x,
            self.check
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(Error::NoGpu(why)) => {
            eprintln!("!!!! NO GPU ({why}): the roofline report needs one; nothing was measured. !!!!");
            std::process::exit(2);
        }
        Err(e) => return Err(e.into()),
    };
    println!("GPU: {}", gpu.device_name()?);

    // Compute roofline: the FMA probe over many waves, its median rate.
    let mut probe = gpu.alloc(132 * 2048 * 8)?;
    let mut fmas = 0;
    let probe_us = gpu.median_us(3, 10, || {
        fmas = gpu.launch_fma_probe(&mut probe, 4096)?;
        Ok(())
    })?;
    drop(probe);
    let fma_per_us = fmas as f64 / probe_us;
    println!(
        "fp32 FMA rate (measured): {:.2} TFMA/s = {:.1} TFLOP/s",
        fma_per_us / 1e6,
        2.0 * fma_per_us / 1e6
    );

    let mut rows = Vec::new();
    let mut failures = 0;
    for case in b::cases(a.scale) {
        let dim = case.dim();
        let n = b::input(&case.shape);
        let d_in = gpu.upload(n.view())?;
        let mut d_out = gpu.alloc(d_in.raw_dim())?;
        let bytes = 2.0 * (case.len() * 4) as f64;
        let copy_us = gpu.median_us(3, a.reps, || gpu.copy_device(&d_in, &mut d_out))?;
        println!(
            "memory roofline (device-to-device copy, {} f32): {copy_us:.1} us = {:.0} GB/s",
            case.size(),
            bytes / copy_us / 1e3
        );
        for &r in &case.radii {
            let m = b::mask(dim, r);
            let fma_us = (case.len() * m.len()) as f64 / fma_per_us;
            for v in std::iter::once(Variant::Auto).chain(Variant::all_of_dim(dim)) {
                if !v.name().contains(&a.only) || v.resolve(dim, r).is_err() {
                    continue;
                }
                let us = gpu.median_us(3, a.reps, || {
                    gpu.conv_device(&d_in, m.view(), v, &mut d_out).map(|_| ())
                })?;
                let (pts, err, bad) = b::spot_check(d_out.to_host()?.view(), n.view(), m.view(), Mode::Zero);
                failures += usize::from(bad > 0);
                let verdict = if bad == 0 { "ok" } else { "FAIL" };
                rows.push(Row {
                    variant: v.name(),
                    dim,
                    size: case.size(),
                    r,
                    us,
                    bytes,
                    copy_us,
                    fma_us,
                    check: format!("{verdict} {pts} pts, max err {err:.1e}"),
                });
            }
        }
    }

    println!(
        "\n{:<20} d {:>12} {:>3} {:>10} {:>7} {:>9} {:>9} {:>6} {:>6} {:>7} check",
        "variant", "size", "r", "median_us", "GB/s", "copy_us", "fma_us", "x_roof", "target", "of_roof"
    );
    for row in &rows {
        row.print(a.target);
    }
    println!(
        "\nx_roof = time / max(copy_us, fma_us); target: x_roof <= {} (at least {:.0}% of the roofline).",
        a.target,
        100.0 / a.target
    );
    println!("Lines in the peers' format:");
    for row in &rows {
        println!(
            "ours={} dim={} n={} r={} us={:.1} GBps={:.0}",
            row.variant,
            row.dim,
            row.size,
            row.r,
            row.us,
            row.bytes / row.us / 1e3
        );
    }
    if failures > 0 {
        return Err(format!("{failures} case(s) disagree with the CPU reference").into());
    }
    Ok(())
}
