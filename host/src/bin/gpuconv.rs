//! The main job: convolve a built-in signal, image and volume with every variant on the
//! GPU, check each against the CPU reference, print a table. Without a GPU: the
//! reference only.
use clap::Parser;
use gpuconv::{reference, Error, Gpu, Mode, Variant};
use ndarray::{Array, Array1, Array2, Array3, Dimension};
use std::time::Instant;

/// Every convolution kernel on the built-in default input, checked against the CPU.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Length of the generated 1D signal.
    #[arg(long, default_value_t = 1 << 24)]
    signal: usize,
    /// Side of the generated square image.
    #[arg(long, default_value_t = 4096)]
    image: usize,
    /// Side of the generated cubic volume.
    #[arg(long, default_value_t = 128)]
    volume: usize,
    /// Mask radius for the 1D runs (mask is 2r+1).
    #[arg(long, default_value_t = 8)]
    radius1d: usize,
    /// Mask radius for the 2D runs (mask is (2r+1)^2).
    #[arg(long, default_value_t = 2)]
    radius2d: usize,
    /// Mask radius for the 3D runs (mask is (2r+1)^3).
    #[arg(long, default_value_t = 2)]
    radius3d: usize,
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

/// A volume: a sphere shell in noise.
fn default_volume(side: usize) -> Array3<f32> {
    let mut noise = values(side * side * side, 5);
    Array3::from_shape_fn((side, side, side), |(z, y, x)| {
        let c = |v: usize| v as f32 / side as f32 - 0.5;
        let r = (c(x).powi(2) + c(y).powi(2) + c(z).powi(2)).sqrt();
        (r * 30.0).cos() + 0.2 * noise.next().unwrap()
    })
}

/// A mask of shape `shape` whose taps sum to about 1 (no tap zero).
fn mask<D: Dimension>(shape: D, seed: u64) -> Array<f32, D> {
    let n = shape.size();
    Array::from_shape_vec(shape, values(n, seed).map(|v| (0.5 + v) / n as f32).collect()).expect("shape")
}

/// One built-in case: an input and a mask of the same dimension.
struct Case<D: Dimension> {
    size: String,
    radius: usize,
    input: Array<f32, D>,
    mask: Array<f32, D>,
}

fn row(variant: &str, size: &str, r: usize, us: Option<f64>, bytes: f64, err: Option<f64>, ok: bool) {
    let t = us.map_or("-".into(), |u| format!("{u:.1}"));
    let gbps = us.map_or("-".into(), |u| format!("{:.0}", bytes / u / 1e3));
    let e = err.map_or("-".into(), |e| format!("{e:.2e}"));
    let status = if ok { "ok" } else { "FAIL" };
    println!("{variant:<22} {size:>12} {r:>3} {t:>10} {gbps:>8} {e:>10} {status:>5}");
}

/// Runs one case: the CPU reference (timed), then, with a GPU, `Auto` and every variant
/// of the case's dimension, each checked element-wise against the reference. Returns the
/// number of variants that disagree.
fn run_case<D: Dimension>(gpu: Option<&Gpu>, c: &Case<D>, reps: usize) -> Result<usize, Error> {
    let dim = c.input.ndim();
    let bytes = 2.0 * (c.input.len() * 4) as f64;
    let s = Instant::now();
    let want = reference::conv(c.input.view(), c.mask.view());
    let cpu_us = s.elapsed().as_secs_f64() * 1e6;
    row(
        &format!("cpu_reference_{dim}d"),
        &c.size,
        c.radius,
        Some(cpu_us),
        bytes,
        None,
        true,
    );
    let Some(gpu) = gpu else { return Ok(0) };
    let abs = reference::correlate_abs(c.input.view(), c.mask.view(), Mode::Zero);
    let taps = c.mask.len();
    let n = gpu.upload(c.input.view())?;
    let mut p = gpu.alloc(n.raw_dim())?;
    let mut failures = 0;
    for v in std::iter::once(Variant::Auto).chain(Variant::all_of_dim(dim)) {
        if v.resolve(dim, c.radius).is_err() {
            println!(
                "{:<22} {:>12} {:>3}  (radius above this variant's limit)",
                v.name(),
                c.size,
                c.radius
            );
            continue;
        }
        let us = gpu.median_us(1, reps, || gpu.conv_device(&n, c.mask.view(), v, &mut p).map(|_| ()))?;
        let got = p.to_host()?;
        let mut max_err = 0.0f64;
        let mut ok = true;
        ndarray::Zip::from(&got).and(&want).and(&abs).for_each(|g, w, s| {
            let e = (*g as f64 - *w as f64).abs();
            max_err = max_err.max(e);
            ok &= e <= reference::tolerance(*s as f64, taps); // false for NaN
        });
        failures += usize::from(!ok);
        row(v.name(), &c.size, c.radius, Some(us), bytes, Some(max_err), ok);
    }
    Ok(failures)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let k = |r: usize| 2 * r + 1;
    let signal = Case {
        size: a.signal.to_string(),
        radius: a.radius1d,
        input: Array1::from_iter(values(a.signal, 3)),
        mask: mask(ndarray::Ix1(k(a.radius1d)), 13),
    };
    let image = Case {
        size: format!("{0}x{0}", a.image),
        radius: a.radius2d,
        input: default_image(a.image),
        mask: mask(ndarray::Ix2(k(a.radius2d), k(a.radius2d)), 11),
    };
    let volume = Case {
        size: format!("{0}x{0}x{0}", a.volume),
        radius: a.radius3d,
        input: default_volume(a.volume),
        mask: mask(ndarray::Ix3(k(a.radius3d), k(a.radius3d), k(a.radius3d)), 17),
    };

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
    let failures = run_case(gpu.as_ref(), &signal, a.reps)?
        + run_case(gpu.as_ref(), &image, a.reps)?
        + run_case(gpu.as_ref(), &volume, a.reps)?;
    println!("\ntime_us: median GPU time of one call (CUDA events around it); GB/s counts one read + one write.");
    if failures > 0 {
        return Err(format!("{failures} variant(s) disagree with the CPU reference").into());
    }
    Ok(())
}
