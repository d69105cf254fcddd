//! The roofline report: every variant on the issue's benchmark cases, timed with CUDA
//! events (median after warm-up), next to two limits measured in the same run: a
//! device-to-device copy of the same bytes (memory) and the GPU's fp32 FMA rate
//! (compute, `(2r+1)^d` FMAs per output). Outputs are spot-checked against the CPU.
//!
//! `cargo run --release -p gpuconv-benches --bin roofline`
use clap::Parser;
use gpuconv::{Error, Gpu, Variant};
use gpuconv_benches as b;

/// Roofline report of every convolution variant on the H200 benchmark cases.
#[derive(Parser)]
#[command(about)]
struct Args {
    /// Side of the square 2D image.
    #[arg(long, default_value_t = b::SIZE_2D)]
    size2d: usize,
    /// Length of the 1D signal.
    #[arg(long, default_value_t = b::SIZE_1D)]
    size1d: usize,
    /// Timed launches per case (after 3 warm-ups); the median is reported.
    #[arg(long, default_value_t = 30)]
    reps: usize,
    /// Only variants whose name contains this (e.g. "fast", "conv2d").
    #[arg(long, default_value = "")]
    only: String,
    /// Target: time at most this multiple of the roofline limit.
    #[arg(long, default_value_t = 1.18)]
    target: f64,
}

/// One timed case: the row of the report.
struct Row {
    variant: String,
    dim: usize,
    size: String,
    r: usize,
    us: f64,
    bytes: f64,
    copy_us: f64,
    fma_us: f64,
    check: String,
}

/// One problem size of a dimension, with its memory roofline measured in this run.
struct Case {
    dim: usize,
    size: String,
    /// One read of the input and one write of the output.
    bytes: f64,
    copy_us: f64,
}

impl Case {
    fn print_roofline(&self) {
        println!(
            "memory roofline (device-to-device copy, {} f32): {:.1} us = {:.0} GB/s",
            self.size,
            self.copy_us,
            self.bytes / self.copy_us / 1e3
        );
    }

    fn row(&self, variant: Variant, r: usize, us: f64, fma_us: f64, check: String) -> Row {
        Row {
            variant: variant.name().into(),
            dim: self.dim,
            size: self.size.clone(),
            r,
            us,
            bytes: self.bytes,
            copy_us: self.copy_us,
            fma_us,
            check,
        }
    }
}

/// Times `launch` into `out` (median of `reps` after 3 warm-ups), then spot-checks
/// `out` with `check`; returns the time, the check's summary and whether it passed.
fn measure<O>(
    gpu: &Gpu,
    reps: usize,
    out: &mut O,
    mut launch: impl FnMut(&mut O) -> gpuconv::Result<()>,
    check: impl FnOnce(&O) -> gpuconv::Result<(usize, f64, usize)>,
) -> gpuconv::Result<(f64, String, bool)> {
    let us = gpu.median_us(3, reps, || launch(out))?;
    let (pts, err, bad) = check(out)?;
    let verdict = if bad == 0 { "ok" } else { "FAIL" };
    Ok((us, format!("{verdict} {pts} pts, max err {err:.1e}"), bad == 0))
}

impl Row {
    fn limit_us(&self) -> f64 {
        self.copy_us.max(self.fma_us)
    }
    fn print(&self, target: f64) {
        let x = self.us / self.limit_us();
        let verdict = if x <= target { "meets" } else { "misses" };
        println!(
            "{:<20} {} {:>10} {:>3} {:>10.1} {:>7.0} {:>9.1} {:>9.1} {:>6.2} {:>6} {:>6.0}% {}",
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
    let mut probe = gpu.alloc1(132 * 2048 * 8)?;
    let mut fmas = 0;
    let probe_us = gpu.median_us(3, 10, || {
        fmas = gpu.launch_fma_probe(&mut probe, 4096)?;
        Ok(())
    })?;
    let fma_per_us = fmas as f64 / probe_us;
    println!(
        "fp32 FMA rate (measured): {:.2} TFMA/s = {:.1} TFLOP/s",
        fma_per_us / 1e6,
        2.0 * fma_per_us / 1e6
    );

    let mut rows = Vec::new();
    let mut failures = 0;
    // 2D cases.
    let (side, n2) = (a.size2d, b::image(a.size2d));
    let d_in2 = gpu.upload2(n2.view())?;
    let mut d_out2 = gpu.alloc2(d_in2.dim())?;
    let case2 = Case {
        dim: 2,
        size: format!("{side}x{side}"),
        bytes: 2.0 * (side * side * 4) as f64,
        copy_us: gpu.median_us(3, a.reps, || gpu.copy_device(&d_in2, &mut d_out2))?,
    };
    case2.print_roofline();
    for r in b::RADII_2D {
        let m = b::mask2(r);
        let fma_us = (side * side * m.len()) as f64 / fma_per_us;
        for v in std::iter::once(Variant::Auto).chain(Variant::ALL_2D) {
            if !v.name().contains(&a.only) || v.resolve(2, r).is_err() {
                continue;
            }
            let (us, check, ok) = measure(
                &gpu,
                a.reps,
                &mut d_out2,
                |o| gpu.conv2d_device(&d_in2, m.view(), v, o).map(|_| ()),
                |o| Ok(b::spot_check_2d(o.to_host()?.view(), n2.view(), m.view())),
            )?;
            failures += usize::from(!ok);
            rows.push(case2.row(v, r, us, fma_us, check));
        }
    }
    drop((d_in2, d_out2));
    // 1D cases.
    let (len, n1) = (a.size1d, b::signal(a.size1d));
    let d_in1 = gpu.upload1(n1.view())?;
    let mut d_out1 = gpu.alloc1(len)?;
    let case1 = Case {
        dim: 1,
        size: len.to_string(),
        bytes: 2.0 * (len * 4) as f64,
        copy_us: gpu.median_us(3, a.reps, || gpu.copy_device(&d_in1, &mut d_out1))?,
    };
    case1.print_roofline();
    for r in b::RADII_1D {
        let m = b::mask1(r);
        let fma_us = (len * m.len()) as f64 / fma_per_us;
        for v in std::iter::once(Variant::Auto).chain(Variant::ALL_1D) {
            if !v.name().contains(&a.only) || v.resolve(1, r).is_err() {
                continue;
            }
            let (us, check, ok) = measure(
                &gpu,
                a.reps,
                &mut d_out1,
                |o| gpu.conv1d_device(&d_in1, m.view(), v, o).map(|_| ()),
                |o| Ok(b::spot_check_1d(o.to_host()?.view(), n1.view(), m.view())),
            )?;
            failures += usize::from(!ok);
            rows.push(case1.row(v, r, us, fma_us, check));
        }
    }

    println!(
        "\n{:<20} d {:>10} {:>3} {:>10} {:>7} {:>9} {:>9} {:>6} {:>6} {:>7} check",
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
