//! The roofline report: every variant on the issues' benchmark cases, timed with CUDA
//! events (median after warm-up), next to two limits measured in the same run: a
//! device-to-device copy of the same bytes (memory) and the GPU's fp32 FMA rate
//! (compute). Outputs are spot-checked against the CPU reference. Sections:
//! - plain arrays: 1D 2^28, 2D 8192², 3D 512³ (every variant);
//! - separable masks, 8192², r = 2..32 (FMA limit: 2(2r+1) per output), and 512³,
//!   r = 1..4 (3(2r+1));
//! - 3-channel interleaved images 8192², u8 and f32, r = 1..4;
//! - every ghost-cell mode against zero, for each fast family;
//! - a batch of images (one launch) against one call per image;
//! - the peers' lines of the same run (`--peers`), side by side, and a chart.
//!
//! `cargo run --release -p gpuconv-benches --bin roofline -- [--peers peers.log]`
use clap::Parser;
use gpuconv::{DeviceArray, DeviceImage, Error, Gpu, Mode, Options, Variant};
use gpuconv_benches as b;
use ndarray::{Array2, Array3, ArrayView2, Axis};
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    /// Only variants whose name contains this (e.g. "fast", "conv3d"), in the cases and
    /// in the modes table.
    #[arg(long, default_value = "")]
    only: String,
    /// Target: time at most this multiple of the roofline limit.
    #[arg(long, default_value_t = 1.25)]
    target: f64,
    /// The peers' output of the same run (`peer=NAME dim=D n=SIZE r=R us=T ...` lines).
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Where to draw the chart (SVG).
    #[arg(long, default_value = "roofline.svg")]
    chart: PathBuf,
    /// Skip the modes, channels and batch tables (profiling runs).
    #[arg(long)]
    no_tables: bool,
    /// The tables printed after the cases, unless `--no-tables` (an A/B of one table).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "modes,channels,batch")]
    tables: Vec<Table>,
    /// Hold the stream busy this many microseconds before each timed call (0: off), so
    /// the times leave out the launch gap of an idle stream (`Gpu::hold_timing`, as
    /// nvbench's blocking kernel); the copies that set the memory limit are held alike.
    #[arg(long, default_value_t = 0.0)]
    hold_us: f64,
    /// Rounds of the modes table, each starting one mode later (a mode's median over
    /// them is printed; more than 1 also prints every round's time).
    #[arg(long, default_value_t = 1)]
    modes_rounds: usize,
    /// The constant mode's fill in the modes table.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    constant_fill: f32,
    /// Radii of the separable 2D case (A/B runs that look for a crossover).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32")]
    separable_radii: Vec<usize>,
}

impl Args {
    /// Whether `--only` keeps the rows named `name` (a variant, or a modes-table label).
    fn wants(&self, name: &str) -> bool {
        name.contains(&self.only)
    }
}

/// A table printed after the cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Table {
    /// Every ghost-cell mode against zero, for each fast family.
    Modes,
    /// f32 images of 1, 2 and 4 channels.
    Channels,
    /// A batch of images in one launch against one call per image.
    Batch,
}

/// What a case is, for matching with the peers' lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    General,
    Separable,
    ImageF32,
    ImageU8,
}

/// One timed case: the row of the report.
struct Row {
    kind: Kind,
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
            "{:<20} {} {:>14} {:>3} {:>10.1} {:>7.0} {:>9.1} {:>9.1} {:>6.2} {:>6} {:>6.0}% {}",
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

/// A verdict string from a spot check.
fn verdict((pts, err, bad): (usize, f64, usize)) -> (String, bool) {
    let v = if bad == 0 { "ok" } else { "FAIL" };
    (format!("{v} {pts} pts, max err {err:.1e}"), bad == 0)
}

/// What the rows of one benchmark case share: its kind, dimension and size, the bytes it
/// moves and the copy of them measured in the same run.
struct Case {
    kind: Kind,
    dim: usize,
    size: String,
    bytes: f64,
    copy_us: f64,
}

impl Case {
    /// An f32 case of `kind` on the input `n`: `n` uploaded, an output of its shape, and
    /// the device-to-device copy of its bytes timed (median of `reps` after 3 warm-ups).
    #[allow(clippy::type_complexity)]
    fn upload<'g, D: ndarray::Dimension>(
        gpu: &'g Gpu,
        n: ndarray::ArrayView<f32, D>,
        kind: Kind,
        reps: usize,
    ) -> Result<(Case, DeviceArray<'g, D>, DeviceArray<'g, D>), Box<dyn std::error::Error>> {
        let (dim, len) = (n.ndim(), n.len());
        let size = b::size(n.shape());
        let d_in = gpu.upload(n)?;
        let mut d_out = gpu.alloc(d_in.raw_dim())?;
        let copy_us = gpu.median_us(3, reps, || gpu.copy_device(&d_in, &mut d_out))?;
        let case = Case {
            kind,
            dim,
            size,
            bytes: 2.0 * (len * 4) as f64,
            copy_us,
        };
        Ok((case, d_in, d_out))
    }

    /// The row of `v` at radius `r`: `run` timed (median of `reps` after 3 warm-ups), then
    /// the output it left in `out` spot-checked by `check` (a failure counted in
    /// `failures`).
    #[allow(clippy::too_many_arguments)]
    fn row<O>(
        &self,
        gpu: &Gpu,
        reps: usize,
        (v, r, fma_us): (Variant, usize, f64),
        out: &mut O,
        mut run: impl FnMut(&mut O) -> gpuconv::Result<()>,
        check: impl FnOnce(&O) -> Result<(usize, f64, usize), Box<dyn std::error::Error>>,
        failures: &mut usize,
    ) -> Result<Row, Box<dyn std::error::Error>> {
        let us = gpu.median_us(3, reps, || run(out))?;
        let (check, ok) = verdict(check(out)?);
        *failures += usize::from(!ok);
        Ok(Row {
            kind: self.kind,
            variant: v.name(),
            dim: self.dim,
            size: self.size.clone(),
            r,
            us,
            bytes: self.bytes,
            copy_us: self.copy_us,
            fma_us,
            check,
        })
    }
}

/// Spot checks of an image result against the f64 reference: sampled pixels of every
/// channel, within tolerance (u8: within half a step more).
fn spot_check_image<T: gpuconv::Pixel>(got: &Array3<T>, img: &Array3<T>, m: ArrayView2<f32>) -> (usize, f64, usize) {
    let f = img.mapv(T::to_f32).into_dyn();
    let m3 = m.insert_axis(Axis(2)).into_dyn();
    let pts = b::sample_points(f.shape(), m.nrows() / 2, 20_000);
    let (mut max_err, mut bad) = (0.0f64, 0);
    let slack = if matches!(T::KIND, gpuconv::PixelKind::U8) {
        0.5
    } else {
        0.0
    };
    for p in &pts {
        let (want, abs) = gpuconv::reference::correlate_at(f.view(), m3.view(), Mode::Zero, p);
        let want = if slack > 0.0 { want.clamp(0.0, 255.0) } else { want };
        let err = (got[[p[0], p[1], p[2]]].to_f32() as f64 - want).abs();
        max_err = max_err.max(err);
        let within = err <= slack + gpuconv::reference::tolerance(abs, m.len());
        bad += usize::from(!within);
    }
    (pts.len(), max_err, bad)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let load = std::time::Instant::now();
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(Error::NoGpu(why)) => {
            eprintln!("!!!! NO GPU ({why}): the roofline report needs one; nothing was measured. !!!!");
            std::process::exit(2);
        }
        Err(e) => return Err(e.into()),
    };
    println!("GPU: {}", gpu.device_name()?);
    println!(
        "kernels: {} (Gpu::new {:.2} s)",
        gpu.kernel_image(),
        load.elapsed().as_secs_f64()
    );

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

    // The launch gap: a copy of one float, timed per call and with the stream held.
    let (one, mut one_out) = (gpu.alloc(1)?, gpu.alloc(1)?);
    let per_call = gpu.median_us(3, 50, || gpu.copy_device(&one, &mut one_out))?;
    // Held as `--hold-us` asks (50 us where it is off, and then let go): one calibration.
    gpu.hold_timing(Some(if a.hold_us > 0.0 { a.hold_us } else { 50.0 }))?;
    let held = gpu.median_us(3, 50, || gpu.copy_device(&one, &mut one_out))?;
    if a.hold_us <= 0.0 {
        gpu.hold_timing(None)?;
    }
    drop((one, one_out));
    println!(
        "launch gap: a 4-byte copy takes {per_call:.1} us per call on an idle stream, {held:.1} us with the stream held; \
         times below {}",
        if a.hold_us > 0.0 {
            format!("hold the stream {:.0} us before each call (--hold-us)", a.hold_us)
        } else {
            "are per call, the gap included".to_string()
        }
    );

    // What baking a mask's taps into an entry costs, once per (entry, mask): its second
    // call (the driver's JIT of that one entry) against the first and the third.
    println!(
        "taps baked into the fast entries: {}",
        if gpu.baked_taps() { "yes" } else { "no (GPUCONV_BAKE=0)" }
    );
    if gpu.baked_taps() {
        for (v, dim, r) in [(Variant::Conv2dFast, 2, 4), (Variant::Conv3dFast, 3, 3)] {
            let n = b::input(&vec![20; dim]);
            let m = b::mask(dim, r).mapv(|t| t * 1.001); // not a mask the report uses
            let opts = Options {
                variant: v,
                mode: Mode::Zero,
            };
            let ms: Vec<f64> = (0..3)
                .map(|_| {
                    let t = std::time::Instant::now();
                    gpu.correlate(n.view(), m.view(), opts)
                        .map(|_| t.elapsed().as_secs_f64() * 1e3)
                })
                .collect::<Result<_, _>>()?;
            println!(
                "baking {v} r = {r}: calls 1 (symbol) {:.2} ms, 2 (bakes) {:.1} ms, 3 (baked) {:.2} ms",
                ms[0], ms[1], ms[2]
            );
        }
    }

    let mut rows = Vec::new();
    let mut failures = 0;

    // ---- plain arrays, 1D/2D/3D
    for case in b::cases(a.scale) {
        let dim = case.dim();
        // A case no wanted row takes is skipped before its input is made and copied (with
        // `--only`, the 2^28 and 512³ inputs alone took seconds of host time a call).
        let keeps = |v: Variant, r: usize| a.wants(v.name()) && v.resolve(dim, r).is_ok();
        let variants = || std::iter::once(Variant::Auto).chain(Variant::all_of_dim(dim));
        if !variants().any(|v| case.radii.iter().any(|&r| keeps(v, r))) {
            continue;
        }
        let n = b::input(&case.shape);
        let (general, d_in, mut d_out) = Case::upload(&gpu, n.view(), Kind::General, a.reps)?;
        println!(
            "memory roofline (device-to-device copy, {} f32): {:.1} us = {:.0} GB/s",
            general.size,
            general.copy_us,
            general.bytes / general.copy_us / 1e3
        );
        for &r in &case.radii {
            let m = b::mask(dim, r);
            let fma_us = (case.len() * m.len()) as f64 / fma_per_us;
            for v in variants() {
                if !keeps(v, r) {
                    continue;
                }
                let run = |o: &mut _| gpu.conv_device(&d_in, m.view(), v, o).map(|_| ());
                let check = |o: &DeviceArray<_>| Ok(b::spot_check(o.to_host()?.view(), n.view(), m.view(), Mode::Zero));
                let case = (v, r, fma_us);
                rows.push(general.row(&gpu, a.reps, case, &mut d_out, run, check, &mut failures)?);
            }
        }
    }

    // ---- separable masks given as per-axis 1D masks: 8192², r = 2..32 (a column and a
    // row mask) and 512³, r = 1..4 (a depth, a column and a row mask)
    let side = 8192 / a.scale;
    let sep2 = [Variant::Auto, Variant::Conv2dSeparable, Variant::Conv2dFast];
    let sep3 = [Variant::Auto, Variant::Conv3dSeparable, Variant::Conv3dFast];
    let block2 = (&a.separable_radii[..], &sep2[..], &[8, 9][..]);
    let block3 = (&[1, 2, 3, 4][..], &sep3[..], &[10, 11, 12][..]);
    rows.extend(separable_rows(
        &gpu,
        &a,
        [side; 2],
        block2,
        fma_per_us,
        separable_2d,
        &mut failures,
    )?);
    let side3 = 512 / a.scale;
    rows.extend(separable_rows(
        &gpu,
        &a,
        [side3; 3],
        block3,
        fma_per_us,
        separable_3d,
        &mut failures,
    )?);

    // ---- 3-channel interleaved images, 8192², u8 and f32, r = 1..4
    rows.extend(image_rows::<f32>(&gpu, &a, side, fma_per_us, &mut failures)?);
    rows.extend(image_rows::<u8>(&gpu, &a, side, fma_per_us, &mut failures)?);

    println!(
        "\n{:<20} d {:>14} {:>3} {:>10} {:>7} {:>9} {:>9} {:>6} {:>6} {:>7} check",
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

    let table = |t: Table| !a.no_tables && a.tables.contains(&t);
    if table(Table::Modes) {
        modes_table(&gpu, &a, side)?;
    }
    if table(Table::Channels) {
        channels_table(&gpu, &a, side)?;
    }
    if table(Table::Batch) {
        batch_table(&gpu, &a)?;
    }

    println!("\nLines in the peers' format:");
    for row in &rows {
        let n = if matches!(row.kind, Kind::ImageF32 | Kind::ImageU8) {
            format!("{}x3", row.size)
        } else {
            row.size.clone()
        };
        println!(
            "ours={} kind={:?} dim={} n={n} r={} us={:.1} GBps={:.0}",
            row.variant,
            row.kind,
            row.dim,
            row.r,
            row.us,
            row.bytes / row.us / 1e3
        );
    }
    if let Some(path) = &a.peers {
        let peers = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        side_by_side(&rows, &parse_peers(&peers), &a.chart)?;
    }
    if failures > 0 {
        return Err(format!("{failures} case(s) disagree with the CPU reference").into());
    }
    Ok(())
}

/// A separable device call with its axis masks as a slice, outermost axis first.
type SeparableCall<D> =
    fn(&Gpu, &DeviceArray<D>, &[ndarray::Array1<f32>], Options, &mut DeviceArray<D>) -> gpuconv::Result<Variant>;

/// [`Gpu::correlate_separable_device`] as a [`SeparableCall`]: axes (column, row).
fn separable_2d(
    gpu: &Gpu,
    d: &DeviceArray<ndarray::Ix2>,
    ax: &[ndarray::Array1<f32>],
    opts: Options,
    o: &mut DeviceArray<ndarray::Ix2>,
) -> gpuconv::Result<Variant> {
    gpu.correlate_separable_device(d, ax[0].view(), ax[1].view(), opts, o)
}

/// [`Gpu::correlate_separable_3d_device`] as a [`SeparableCall`]: axes (depth, column, row).
fn separable_3d(
    gpu: &Gpu,
    d: &DeviceArray<ndarray::Ix3>,
    ax: &[ndarray::Array1<f32>],
    opts: Options,
    o: &mut DeviceArray<ndarray::Ix3>,
) -> gpuconv::Result<Variant> {
    gpu.correlate_separable_3d_device(d, ax[0].view(), ax[1].view(), ax[2].view(), opts, o)
}

/// The rows of one separable block: an input of `shape`, a mask of `shape.len()` 1D axis
/// masks at each of `radii` (axis `i` drawn with seed `seeds[i]`, positive, each summing
/// to about 1), each of `variants` run through `run` and spot-checked against the full
/// mask (their outer product). A row is kept as `--only` and `--no-tables` (no `Auto`
/// row) say; a block none of whose rows is kept is skipped before its input is made.
fn separable_rows<D: ndarray::Dimension>(
    gpu: &Gpu,
    a: &Args,
    shape: impl ndarray::IntoDimension<Dim = D>,
    (radii, variants, seeds): (&[usize], &[Variant], &[u64]),
    fma_per_us: f64,
    run: SeparableCall<D>,
    failures: &mut usize,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let shape = shape.into_dimension();
    let dim = shape.ndim();
    let keeps = |v: Variant, r: usize| {
        let mut rs = [0u32; 3];
        rs[..dim].fill(r as u32);
        !(a.no_tables && v == Variant::Auto) && a.wants(v.name()) && v.resolve_mask(dim, rs, true, Mode::Zero).is_ok()
    };
    let mut rows = Vec::new();
    if !variants.iter().any(|&v| radii.iter().any(|&r| keeps(v, r))) {
        return Ok(rows);
    }
    let n = b::input(shape.slice()).into_dimensionality::<D>()?;
    let (case, d_in, mut d_out) = Case::upload(gpu, n.view(), Kind::Separable, a.reps)?;
    for &r in radii {
        let k = 2 * r + 1;
        let axes: Vec<_> = seeds
            .iter()
            .map(|&seed| ndarray::Array1::from_shape_fn(k, |i| (1.0 + b::value(i as u64, seed).abs()) / k as f32))
            .collect();
        let full = ndarray::ArrayD::from_shape_fn(vec![k; dim], |at| (0..dim).map(|i| axes[i][at[i]]).product::<f32>());
        let fma_us = (n.len() * dim * k) as f64 / fma_per_us;
        for &v in variants {
            if !keeps(v, r) {
                continue;
            }
            let opts = Options::variant(v);
            let run = |o: &mut _| run(gpu, &d_in, &axes, opts, o).map(|_| ());
            let check = |o: &DeviceArray<D>| {
                let got = o.to_host()?.into_dyn();
                Ok(b::spot_check(got.view(), n.view().into_dyn(), full.view(), Mode::Zero))
            };
            rows.push(case.row(gpu, a.reps, (v, r, fma_us), &mut d_out, run, check, failures)?);
        }
    }
    Ok(rows)
}

/// 3-channel images of pixel type `T`, 8192², r = 1..4: the image variants and `Auto`.
fn image_rows<T: gpuconv::Pixel>(
    gpu: &Gpu,
    a: &Args,
    side: usize,
    fma_per_us: f64,
    failures: &mut usize,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let kind = if matches!(T::KIND, gpuconv::PixelKind::U8) {
        Kind::ImageU8
    } else {
        Kind::ImageF32
    };
    // The image variants (and `Auto`) this pixel type's rows keep under `--only`; none: the
    // image is not made.
    let wanted = |v: Variant, r: u32| {
        a.wants(v.name()) && v.resolve_image([r, r, 0], 3, Mode::Zero).is_ok() && v.takes_pixels(T::KIND)
    };
    if !std::iter::once(Variant::Auto)
        .chain(Variant::IMAGES)
        .any(|v| (1..=4).any(|r| wanted(v, r)))
    {
        return Ok(Vec::new());
    }
    let img = Array3::from_shape_fn((side, side, 3), |(y, x, c)| {
        let v = b::value(((y * side + x) * 3 + c) as u64, 11);
        T::from_f32(if kind == Kind::ImageU8 { (v + 1.0) * 127.0 } else { v })
    });
    let d_in = gpu.upload_image(img.view())?;
    let mut d_out = gpu.alloc_image::<T>(side, side, 3)?;
    let bytes = 2.0 * (side * side * 3 * std::mem::size_of::<T>()) as f64;
    // The memory limit: a copy of the same bytes (the image as a plain buffer).
    let flat_in = gpu.alloc(side * side * 3 * std::mem::size_of::<T>() / 4)?;
    let mut flat_out = gpu.alloc(flat_in.raw_dim())?;
    let copy_us = gpu.median_us(3, a.reps, || gpu.copy_device(&flat_in, &mut flat_out))?;
    println!("memory roofline ({side}x{side}x3 {kind:?}): {copy_us:.1} us");
    let images = Case {
        kind,
        dim: 2,
        size: format!("{side}x{side}"),
        bytes,
        copy_us,
    };
    let mut rows = Vec::new();
    for r in 1..=4usize {
        let k = 2 * r + 1;
        let m = Array2::from_shape_fn((k, k), |(y, x)| {
            (1.5 + b::value((y * k + x) as u64, 12)) / (k * k) as f32
        });
        let fma_us = (side * side * 3 * k * k) as f64 / fma_per_us;
        for v in std::iter::once(Variant::Auto).chain(Variant::IMAGES) {
            if !wanted(v, r as u32) {
                continue;
            }
            let opts = Options::variant(v);
            let run = |o: &mut _| gpu.correlate_image_device(&d_in, m.view(), opts, o).map(|_| ());
            let check = |o: &DeviceImage<T>| Ok(spot_check_image(&o.to_host()?, &img, m.view()));
            let case = (v, r, fma_us);
            rows.push(images.row(gpu, a.reps, case, &mut d_out, run, check, failures)?);
        }
    }
    Ok(rows)
}

/// Every ghost-cell mode against zero, for each fast family on its benchmark size.
fn modes_table(gpu: &Gpu, a: &Args, side: usize) -> Result<(), Box<dyn std::error::Error>> {
    println!("\nGhost-cell modes (median us; ratio to zero, target <= 1.05):");
    println!(
        "{:<18} {:>14} {:>3}  {}",
        "variant",
        "size",
        "r",
        Mode::ALL.map(|m| format!("{:>17}", m.name())).join("")
    );
    let modes_of = |label: &str,
                    size: &str,
                    r: usize,
                    mut run: Box<dyn FnMut(Mode) -> gpuconv::Result<()> + '_>|
     -> gpuconv::Result<()> {
        if !a.wants(label) {
            return Ok(()); // `--only` filters this table's rows as it does the cases
        }
        // Round k times the modes starting from the k-th (rotated), so that a drift of
        // the clocks over the row (power, heat) lands on a different mode each round;
        // each mode's median over the rounds is printed.
        let n = Mode::ALL.len();
        let mut times = vec![Vec::new(); n];
        for round in 0..a.modes_rounds.max(1) {
            for i in 0..n {
                let m = (i + round) % n;
                let mode = match Mode::ALL[m] {
                    Mode::Constant(_) => Mode::Constant(a.constant_fill),
                    mode => mode,
                };
                times[m].push(gpu.median_us(3, a.reps, || run(mode))?);
            }
        }
        if a.modes_rounds > 1 {
            let rounds: Vec<String> = (0..n)
                .map(|m| times[m].iter().map(|t| format!("{t:.1}")).collect::<Vec<_>>().join("/"))
                .collect();
            println!(
                "  rounds ({label} r = {r}, zero first in round 0): {}",
                rounds.join("  ")
            );
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let zero = median(&mut times[0]);
        let mut line = format!("{label:<18} {size:>14} {r:>3}  ");
        for t in &mut times {
            let us = median(t);
            line += &format!("{:>9.1} ({:.3})", us, us / zero);
        }
        println!("{line}");
        Ok(())
    };
    // A family's input is made only where `--only` keeps its rows (`Args::wants`).
    let len = (1 << 28) / a.scale / a.scale;
    // A family on general masks: one input of `shape`, a row for each radius.
    let general = |v: Variant, shape: &[usize], radii: &[usize]| -> Result<(), Box<dyn std::error::Error>> {
        if !a.wants(v.name()) {
            return Ok(());
        }
        let d = gpu.upload(b::input(shape).view())?;
        let mut o = gpu.alloc(d.raw_dim())?;
        let size = b::size(shape);
        for &r in radii {
            let m = b::mask(shape.len(), r);
            modes_of(
                v.name(),
                &size,
                r,
                Box::new(|mode| {
                    gpu.correlate_device(&d, m.view(), Options { variant: v, mode }, &mut o)
                        .map(|_| ())
                }),
            )?;
        }
        Ok(())
    };
    general(Variant::Conv1dFast, &[len], &[2])?;
    general(Variant::Conv2dFast, &[side, side], &[2, 4])?;
    separable_modes(
        gpu,
        a,
        (Variant::Conv2dSeparable, &[side, side], &[4]),
        &modes_of,
        separable_2d,
    )?;
    let s3 = 512 / a.scale;
    general(Variant::Conv3dFast, &[s3, s3, s3], &[1, 2, 3])?;
    // r = 1 and r = 2 walk in different numbers of waves (`layout::families::conv3d_separable::waves`),
    // r = 3 filters y first (`y_first`), and r = 4 walks in one-column patches (`qx`).
    separable_modes(
        gpu,
        a,
        (Variant::Conv3dSeparable, &[s3, s3, s3], &[1, 2, 3, 4]),
        &modes_of,
        separable_3d,
    )?;
    // Auto runs f32 images on image_patches, at every radius.
    let f32_rows = [
        (Variant::ImageFast, 2),
        (Variant::ImagePatches, 1),
        (Variant::ImagePatches, 4),
    ];
    image_mode_rows(gpu, a, (side, 0.5f32, ""), &f32_rows, &modes_of)?;
    // Auto runs u8 images on image_patches at r = 1 (its U8_AUTO_RADII below image_mma's),
    // and image_mma from r = 2 (image_mma::AUTO_FROM_RADIUS; its integer path, whose border
    // tiles rewrite their ghost words once the tensor copy lands under the mapping modes),
    // timed there and at r = 4, its largest radius (the fp16 path).
    let u8_rows = [
        (Variant::ImagePatches, 1),
        (Variant::ImageMma, 2),
        (Variant::ImageMma, 4),
    ];
    image_mode_rows(gpu, a, (side, 128u8, " u8"), &u8_rows, &modes_of)?;
    Ok(())
}

/// `modes_table`'s row printer: a label, the size, the radius and the call timed under
/// each mode it is given.
type ModesOf<'a> =
    dyn Fn(&str, &str, usize, Box<dyn FnMut(Mode) -> gpuconv::Result<()> + '_>) -> gpuconv::Result<()> + 'a;

/// The modes table's rows of the separable family `v`, one a radius: every axis the benchmark's 1D mask of that radius, given to `run` as
/// the axis masks in the device API's order.
fn separable_modes<D: ndarray::Dimension>(
    gpu: &Gpu,
    a: &Args,
    (v, shape, radii): (Variant, &[usize], &[usize]),
    modes_of: &ModesOf,
    run: SeparableCall<D>,
) -> Result<(), Box<dyn std::error::Error>> {
    if !a.wants(v.name()) {
        return Ok(());
    }
    let d = gpu.upload(b::input(shape).into_dimensionality::<D>()?.view())?;
    let mut o = gpu.alloc(d.raw_dim())?;
    let size = b::size(shape);
    for &r in radii {
        let t = b::mask(1, r).into_dimensionality::<ndarray::Ix1>()?;
        let axes = vec![t; shape.len()];
        modes_of(
            v.name(),
            &size,
            r,
            Box::new(|mode| run(gpu, &d, &axes, Options { variant: v, mode }, &mut o).map(|_| ())),
        )?;
    }
    Ok(())
}

/// The modes table's rows of 3-channel `side`² images of pixel type `T`, every pixel
/// `value` (the size labelled with `suffix`): one a `(variant, radius)` of `rows`, with
/// the benchmark's 2D mask of that radius. The image is made only where `--only` keeps a
/// row.
fn image_mode_rows<T: gpuconv::Pixel>(
    gpu: &Gpu,
    a: &Args,
    (side, value, suffix): (usize, T, &str),
    rows: &[(Variant, usize)],
    modes_of: &ModesOf,
) -> Result<(), Box<dyn std::error::Error>> {
    if !rows.iter().any(|(v, _)| a.wants(v.name())) {
        return Ok(());
    }
    let img = Array3::from_elem((side, side, 3), value);
    let input = gpu.upload_image(img.view())?;
    let mut output = gpu.alloc_image::<T>(side, side, 3)?;
    let size = format!("{side}x{side}x3{suffix}");
    for &(variant, r) in rows {
        let m = b::mask(2, r).into_dimensionality::<ndarray::Ix2>()?;
        modes_of(
            variant.name(),
            &size,
            r,
            Box::new(|mode| {
                gpu.correlate_image_device(&input, m.view(), Options { variant, mode }, &mut output)
                    .map(|_| ())
            }),
        )?;
    }
    Ok(())
}

/// f32 images of 1, 2 and 4 interleaved channels (the report's image cases have 3):
/// image_fast against image_patches, which Auto runs on every f32 image.
fn channels_table(gpu: &Gpu, a: &Args, side: usize) -> Result<(), Box<dyn std::error::Error>> {
    println!("\nf32 images by channel count (median us; ratio: image_patches to image_fast):");
    println!(
        "{:>16} {:>3} {:>12} {:>14} {:>7}",
        "size", "r", "image_fast", "image_patches", "ratio"
    );
    for c in [1usize, 2, 4] {
        let img = Array3::from_elem((side, side, c), 0.5f32);
        let di = gpu.upload_image(img.view())?;
        let mut oi = gpu.alloc_image::<f32>(side, side, c)?;
        for r in [1, 4] {
            let m = b::mask(2, r).into_dimensionality::<ndarray::Ix2>()?;
            let mut time = |v| {
                gpu.median_us(3, a.reps, || {
                    gpu.correlate_image_device(&di, m.view(), Options::variant(v), &mut oi)
                        .map(|_| ())
                })
            };
            let (fast, patches) = (time(Variant::ImageFast)?, time(Variant::ImagePatches)?);
            println!(
                "{:>16} {r:>3} {fast:>12.1} {patches:>14.1} {:>7.3}",
                format!("{side}x{side}x{c}"),
                patches / fast
            );
        }
    }
    Ok(())
}

/// A stack of images under a mask one plane deep (one launch, conv2d_fast on every
/// plane) against one 2D call per image.
fn batch_table(gpu: &Gpu, a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (count, side) = (16, 2048 / a.scale);
    let stack = b::input(&[count, side, side]);
    let m3 = b::mask(2, 2).insert_axis(Axis(0));
    let m2 = b::mask(2, 2);
    let d = gpu.upload(stack.view())?;
    let mut o = gpu.alloc(d.raw_dim())?;
    let one = gpu.upload(b::input(&[side, side]).view())?;
    let mut one_out = gpu.alloc(one.raw_dim())?;
    let batch = gpu.median_us(3, a.reps, || {
        gpu.conv_device(&d, m3.view(), Variant::Auto, &mut o).map(|_| ())
    })?;
    let single = gpu.median_us(3, a.reps, || {
        gpu.conv_device(&one, m2.view(), Variant::Auto, &mut one_out)
            .map(|_| ())
    })?;
    let ran = gpu.conv_device(&d, m3.view(), Variant::Auto, &mut o)?;
    println!(
        "\nBatch: {count} images of {side}x{side}, r = 2: one launch ({ran}) {batch:.1} us = {:.1} us per image; one 2D call {single:.1} us per image ({:.2}x)",
        batch / count as f64,
        single / (batch / count as f64)
    );
    Ok(())
}

/// A peer's line: name, case key and time.
struct Peer {
    name: String,
    key: (Kind, String, usize),
    us: f64,
}

/// `peer=NAME dim=D n=SIZE r=R us=T ...` lines; memcpy lines and others skipped.
fn parse_peers(text: &str) -> Vec<Peer> {
    text.lines()
        .filter_map(|l| {
            let field = |k: &str| l.split_whitespace().find_map(|f| f.strip_prefix(k)).map(str::to_string);
            let name = field("peer=")?;
            let (n, r, us) = (field("n=")?, field("r=")?.parse().ok()?, field("us=")?.parse().ok()?);
            if name.contains("memcpy") {
                return None;
            }
            let (kind, n) = if name.contains("sep") {
                (Kind::Separable, n)
            } else if name.contains("c3") {
                (Kind::ImageF32, if n.ends_with("x3") { n } else { format!("{n}x3") })
            } else {
                (Kind::General, n)
            };
            Some(Peer {
                name,
                key: (kind, n, r),
                us,
            })
        })
        .collect()
}

/// Our `Auto` time beside every peer's for each case, the fastest peer named; and the
/// chart: per case, the roofline, ours and each peer, log scale.
fn side_by_side(rows: &[Row], peers: &[Peer], chart: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    println!("\nBeside the peers (same run; us, lower is better):");
    let mut cases: BTreeMap<(Kind, String, usize), (&Row, Vec<&Peer>)> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.variant == "auto") {
        let size = if matches!(row.kind, Kind::ImageF32 | Kind::ImageU8) {
            format!("{}x3", row.size)
        } else {
            row.size.clone()
        };
        let peer_kind = if row.kind == Kind::ImageU8 {
            Kind::ImageF32
        } else {
            row.kind
        };
        let mine: Vec<&Peer> = peers
            .iter()
            .filter(|p| p.key == (peer_kind, size.clone(), row.r))
            .collect();
        cases.insert((row.kind, size, row.r), (row, mine));
    }
    for ((kind, size, r), (row, mine)) in &cases {
        let best = mine.iter().min_by(|a, b| a.us.total_cmp(&b.us));
        let list: Vec<String> = mine.iter().map(|p| format!("{} {:.1}", p.name, p.us)).collect();
        match best {
            Some(b) => println!(
                "{kind:?} {size} r={r}: ours {:.1} (x_roof {:.2}), fastest peer {} {:.1}: ours {:.2}x faster | {}",
                row.us,
                row.us / row.limit_us(),
                b.name,
                b.us,
                b.us / row.us,
                list.join(", ")
            ),
            None => println!(
                "{kind:?} {size} r={r}: ours {:.1} (x_roof {:.2}), no peer measured this case",
                row.us,
                row.us / row.limit_us()
            ),
        }
    }
    draw_chart(&cases, chart)?;
    println!("chart: {}", chart.display());
    Ok(())
}

type Cases<'a> = BTreeMap<(Kind, String, usize), (&'a Row, Vec<&'a Peer>)>;

/// Grouped bars per case on a log scale: the roofline limit, ours, and each peer.
fn draw_chart(cases: &Cases, path: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let labels: Vec<String> = cases.keys().map(|(k, s, r)| format!("{k:?} {s} r{r}")).collect();
    let root = SVGBackend::new(path, (1600, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "gpuconv on the H200: time per case (log scale), roofline, ours, peers",
            ("sans-serif", 22),
        )
        .margin(20)
        .x_label_area_size(190)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..labels.len() as f64, (10f64..200_000f64).log_scale())?;
    chart
        .configure_mesh()
        .x_labels(labels.len())
        .x_label_formatter(&|x| labels.get(x.floor() as usize).cloned().unwrap_or_default())
        .x_label_style(("sans-serif", 12).into_font().transform(FontTransform::Rotate90))
        .y_desc("microseconds")
        .draw()?;
    let series = ["roofline", "ours (auto)", "textbook CUDA C++", "NPP", "cuDNN", "CuPy"];
    let colors = [
        RGBColor(160, 160, 160),
        BLUE,
        RGBColor(230, 140, 0),
        RED,
        GREEN,
        MAGENTA,
    ];
    let pick = |peers: &[&Peer], prefix: &str| {
        peers
            .iter()
            .filter(|p| p.name.starts_with(prefix))
            .map(|p| p.us)
            .min_by(f64::total_cmp)
    };
    for (s, (name, color)) in series.iter().zip(colors).enumerate() {
        let bars: Vec<(usize, f64)> = cases
            .values()
            .enumerate()
            .filter_map(|(i, (row, peers))| {
                let us = match s {
                    0 => Some(row.limit_us()),
                    1 => Some(row.us),
                    2 => pick(peers, "cuda"),
                    3 => pick(peers, "npp"),
                    4 => pick(peers, "cudnn"),
                    _ => pick(peers, "cupy"),
                }?;
                Some((i, us))
            })
            .collect();
        let w = 0.8 / series.len() as f64;
        chart
            .draw_series(bars.iter().map(|&(i, us)| {
                let x0 = i as f64 + 0.1 + w * s as f64;
                Rectangle::new([(x0, 10.0), (x0 + w, us)], color.filled())
            }))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "peer=memcpy_d2d dim=2 n=8192x8192 r=0 us=131.5 GBps=4084\n\
        peer=cuda_tiled_in dim=2 n=8192x8192 r=3 us=822.5 GBps=653\n\
        peer=npp_filter_border_c3 dim=2 n=8192x8192 r=2 us=1288.3 GBps=1250\n\
        peer=cupy_ndimage_c3 dim=2 n=8192x8192x3 r=2 us=3617.2 GBps=445\n\
        peer=npp_sep2pass_c1 dim=2 n=8192x8192 r=4 us=1071.4 GBps=501\n\
        cupy peers failed: something\n";

    #[test]
    fn peers_lines_are_keyed_by_case() {
        let p = parse_peers(LOG);
        assert_eq!(p.len(), 4, "memcpy and non-peer lines skipped");
        assert_eq!(p[0].key, (Kind::General, "8192x8192".into(), 3));
        assert_eq!(
            p[1].key,
            (Kind::ImageF32, "8192x8192x3".into(), 2),
            "NPP's C3R size gains its channels"
        );
        assert_eq!(p[2].key, (Kind::ImageF32, "8192x8192x3".into(), 2));
        assert_eq!(p[3].key, (Kind::Separable, "8192x8192".into(), 4));
    }

    #[test]
    fn the_chart_is_drawn() {
        let row = |kind, r, us| Row {
            kind,
            variant: "auto",
            dim: 2,
            size: "8192x8192".into(),
            r,
            us,
            bytes: 5.4e8,
            copy_us: 131.0,
            fma_us: 100.0,
            check: "ok".into(),
        };
        let rows = [
            row(Kind::General, 3, 214.0),
            row(Kind::ImageF32, 2, 500.0),
            row(Kind::Separable, 4, 150.0),
        ];
        let path = std::env::temp_dir().join("gpuconv-roofline-test.svg");
        side_by_side(&rows, &parse_peers(LOG), &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("ours (auto)") && svg.contains("NPP"),
            "{}",
            &svg[..200.min(svg.len())]
        );
        assert!(svg.matches("<rect").count() >= 6, "bars drawn");
    }
}
