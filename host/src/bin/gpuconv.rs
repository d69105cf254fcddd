//! The main job: convolve a built-in image and signal with every variant on the GPU,
//! check each against the CPU reference, print a table. Without a GPU: the reference only.
use clap::Parser;
use gpuconv::{reference, Error, Gpu, Variant};
use ndarray::{Array1, Array2};
use std::time::Instant;

/// Every convolution kernel on the built-in default input, checked against the CPU.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Side of the generated square image.
    #[arg(long, default_value_t = 4096)]
    image: usize,
    /// Length of the generated 1D signal.
    #[arg(long, default_value_t = 1 << 24)]
    signal: usize,
    /// Mask radius for the 2D runs (mask is (2r+1)^2).
    #[arg(long, default_value_t = 2)]
    radius2d: usize,
    /// Mask radius for the 1D runs (mask is 2r+1).
    #[arg(long, default_value_t = 8)]
    radius1d: usize,
    /// Timed repetitions per variant (after one warm-up).
    #[arg(long, default_value_t = 10)]
    reps: usize,
}

/// Deterministic pseudo-random values in [0, 1): a built-in input needs no files.
fn values(n: usize, seed: u64) -> impl Iterator<Item = f32> {
    (0..n as u64).map(move |i| {
        let x = (i ^ seed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29)
            .wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (x >> 40) as f32 / (1u64 << 24) as f32
    })
}

/// A smooth test image (gradients + rings) with noise, so every tap matters.
fn default_image(side: usize) -> Array2<f32> {
    let mut noise = values(side * side, 7);
    Array2::from_shape_fn((side, side), |(y, x)| {
        let (fx, fy) = (x as f32 / side as f32, y as f32 / side as f32);
        let ring = ((fx - 0.5).hypot(fy - 0.5) * 40.0).sin();
        0.5 * fx + 0.3 * fy + 0.2 * ring + 0.1 * noise.next().unwrap()
    })
}

fn max_error(got: &[f32], want: &[f32]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (*g as f64 - *w as f64).abs())
        .fold(0.0, f64::max)
}

fn row(variant: &str, size: &str, r: usize, us: Option<f64>, bytes: f64, err: Option<f64>, ok: bool) {
    let t = us.map_or("-".into(), |u| format!("{u:.1}"));
    let gbps = us.map_or("-".into(), |u| format!("{:.0}", bytes / u / 1e3));
    let e = err.map_or("-".into(), |e| format!("{e:.2e}"));
    let status = if ok { "ok" } else { "FAIL" };
    println!("{variant:<22} {size:>12} {r:>3} {t:>10} {gbps:>8} {e:>10} {status:>5}");
}

/// Median GPU time (µs, CUDA events) of `reps` runs of `f`, after one warm-up.
fn time_us(gpu: &Gpu, reps: usize, mut f: impl FnMut() -> gpuconv::Result<Variant>) -> gpuconv::Result<f64> {
    gpu.median_us(1, reps, || f().map(|_| ()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let image = default_image(a.image);
    let signal = Array1::from_iter(values(a.signal, 3));
    let k2 = 2 * a.radius2d + 1;
    let mask2 = Array2::from_shape_vec((k2, k2), values(k2 * k2, 11).map(|v| v / (k2 * k2) as f32).collect())?;
    let mask1 = Array1::from_iter(values(2 * a.radius1d + 1, 13).map(|v| v / (2 * a.radius1d + 1) as f32));

    let s = Instant::now();
    let ref2 = reference::conv2d(image.view(), mask2.view());
    let cpu2 = s.elapsed().as_secs_f64() * 1e6;
    let s = Instant::now();
    let ref1 = reference::conv1d(signal.view(), mask1.view());
    let cpu1 = s.elapsed().as_secs_f64() * 1e6;
    let size2 = format!("{0}x{0}", a.image);
    let bytes2 = 2.0 * (a.image * a.image * 4) as f64;
    let bytes1 = 2.0 * (a.signal * 4) as f64;

    let gpu = match Gpu::new() {
        Ok(g) => Some(g),
        Err(Error::NoGpu(why)) => {
            println!("NO GPU: {why}\nRunning the CPU reference alone (times are CPU, f64 accumulation).\n");
            None
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(g) = &gpu {
        println!("GPU: {}", g.device_name()?);
    }
    println!(
        "{:<22} {:>12} {:>3} {:>10} {:>8} {:>10} {:>5}",
        "variant", "size", "r", "time_us", "GB/s", "max_err", "check"
    );
    row("cpu_reference_2d", &size2, a.radius2d, Some(cpu2), bytes2, None, true);
    row(
        "cpu_reference_1d",
        &a.signal.to_string(),
        a.radius1d,
        Some(cpu1),
        bytes1,
        None,
        true,
    );
    let Some(gpu) = gpu else { return Ok(()) };

    let abs2 = reference::conv2d_abs(image.view(), mask2.view());
    let abs1 = reference::conv1d_abs(signal.view(), mask1.view());
    let mut failures = 0;
    let (n2, n1) = (gpu.upload2(image.view())?, gpu.upload1(signal.view())?);
    let (mut p2, mut p1) = (gpu.alloc2(n2.dim())?, gpu.alloc1(n1.len())?);
    for v in std::iter::once(Variant::Auto).chain(Variant::ALL_2D) {
        if v.resolve(2, a.radius2d).is_err() {
            println!(
                "{:<22} {size2:>12} {:>3}  (radius above this variant's limit)",
                v.name(),
                a.radius2d
            );
            continue;
        }
        let us = time_us(&gpu, a.reps, || gpu.conv2d_device(&n2, mask2.view(), v, &mut p2))?;
        let out = p2.to_host()?;
        let ok = ndarray::Zip::from(&out)
            .and(&ref2)
            .and(&abs2)
            .all(|g, w, s| ((g - w).abs() as f64) <= reference::tolerance(*s as f64, k2 * k2));
        failures += usize::from(!ok);
        row(
            v.name(),
            &size2,
            a.radius2d,
            Some(us),
            bytes2,
            Some(max_error(out.as_slice().unwrap(), ref2.as_slice().unwrap())),
            ok,
        );
    }
    for v in std::iter::once(Variant::Auto).chain(Variant::ALL_1D) {
        if v.resolve(1, a.radius1d).is_err() {
            println!(
                "{:<22} {:>12} {:>3}  (radius above this variant's limit)",
                v.name(),
                a.signal,
                a.radius1d
            );
            continue;
        }
        let us = time_us(&gpu, a.reps, || gpu.conv1d_device(&n1, mask1.view(), v, &mut p1))?;
        let out = p1.to_host()?;
        let ok = ndarray::Zip::from(&out)
            .and(&ref1)
            .and(&abs1)
            .all(|g, w, s| ((g - w).abs() as f64) <= reference::tolerance(*s as f64, 2 * a.radius1d + 1));
        failures += usize::from(!ok);
        row(
            v.name(),
            &a.signal.to_string(),
            a.radius1d,
            Some(us),
            bytes1,
            Some(max_error(out.as_slice().unwrap(), ref1.as_slice().unwrap())),
            ok,
        );
    }
    println!("\ntime_us: median GPU time of one call (CUDA events around it); GB/s counts one read + one write.");
    if failures > 0 {
        return Err(format!("{failures} variant(s) disagree with the CPU reference").into());
    }
    Ok(())
}
