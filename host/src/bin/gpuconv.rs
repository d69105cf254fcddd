//! The main job: convolve a built-in signal, image and volume with every variant on the
//! GPU, check each against the CPU reference, print a table, and write pictures of a
//! generated image under classic masks. Without a GPU: the reference only.
//!
//! `gpuconv filter IN OUT`: filter PNG/JPEG files with a named or file mask.
use clap::{Parser, Subcommand};
use gpuconv::{imageio, masks, reference, Error, Gpu, Mode, Options, Variant};
use indicatif::{ProgressBar, ProgressStyle};
use ndarray::{s, Array, Array1, Array2, Array3, ArrayView2, ArrayView3, Dimension};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Every convolution kernel on the built-in default input, checked against the CPU, and
/// pictures of classic masks on a generated image. `gpuconv filter` filters image files.
#[derive(Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    main: Args,
}

#[derive(Subcommand)]
enum Command {
    Filter(FilterArgs),
}

/// Filter a PNG or JPEG image, or every one in a directory, with a 2D mask.
///
/// Every color channel is filtered with the mask (correlation, or convolution with
/// --convolve); alpha channels (gray+alpha, RGBA) are kept as they are. Results are
/// rounded to the nearest integer and clamped to 0..=255. Uses the GPU when there is
/// one, else the CPU reference (a line on stderr says so). Outputs are written whole
/// or not at all.
#[derive(clap::Args)]
struct FilterArgs {
    /// Input PNG or JPEG file, or a directory whose .png/.jpg/.jpeg files (not
    /// recursive) are all filtered.
    input: PathBuf,
    /// Output file, format from its extension (.png, .jpg, .jpeg; JPEG drops alpha).
    /// A directory when IN is one (created if missing), files keep their names.
    output: PathBuf,
    /// Named mask: gaussian, box, sobel_x, sobel_y, laplacian, sharpen, emboss.
    #[arg(long, default_value = "gaussian", conflicts_with = "mask_file")]
    mask: String,
    /// Gaussian standard deviation in pixels (radius ceil(3*sigma)).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    sigma: f32,
    /// Box filter radius (the mask is (2r+1)^2).
    #[arg(long, default_value_t = 1)]
    radius: usize,
    /// Mask text file instead of a named mask: one row per line, numbers separated by
    /// spaces or commas, '#' starts a comment; odd numbers of rows and columns.
    #[arg(long, value_name = "FILE")]
    mask_file: Option<PathBuf>,
    /// What pixels outside the image read: zero, constant (--cval), nearest, reflect,
    /// mirror, wrap (scipy.ndimage names; OpenCV's replicate, reflect101 also work).
    #[arg(long, default_value = "reflect")]
    mode: String,
    /// The value outside the image for --mode constant.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    cval: f32,
    /// GPU kernel: auto, image_fast or image_tiled.
    #[arg(long, default_value = "auto")]
    variant: String,
    /// Convolve (flip the mask along both axes) instead of correlating.
    #[arg(long)]
    convolve: bool,
}

/// The main job's flags.
#[derive(clap::Args)]
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
    /// Directory for the pictures (created if missing).
    #[arg(long, default_value = "gpuconv-demo")]
    out_dir: PathBuf,
    /// Side of the generated square picture the masks are shown on.
    #[arg(long, default_value_t = 512)]
    demo_side: usize,
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
        if let Err(e) = v.resolve(dim, c.radius) {
            let why = match e {
                gpuconv::Error::NotSeparable { .. } => "rank-1 masks only; this mask is not one",
                _ => "radius above this variant's limit",
            };
            println!("{:<22} {:>12} {:>3}  ({why})", v.name(), c.size, c.radius);
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        None => match main_job(&cli.main) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("Error: {e}");
                ExitCode::FAILURE
            }
        },
        Some(Command::Filter(f)) => match filter(f) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("gpuconv filter: error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn main_job(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
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
        println!("kernels: {}", g.kernel_image());
    }
    println!(
        "{:<22} {:>12} {:>3} {:>10} {:>8} {:>10} {:>5}",
        "variant", "size", "r", "time_us", "GB/s", "max_err", "check"
    );
    let failures = run_case(gpu.as_ref(), &signal, a.reps)?
        + run_case(gpu.as_ref(), &image, a.reps)?
        + run_case(gpu.as_ref(), &volume, a.reps)?;
    println!("\ntime_us: median GPU time of one call (CUDA events around it); GB/s counts one read + one write.");
    demo_pictures(gpu.as_ref(), &a.out_dir, a.demo_side)?;
    if failures > 0 {
        return Err(format!("{failures} variant(s) disagree with the CPU reference").into());
    }
    Ok(())
}

/// A test picture a person can judge filters on: colour gradients, a checkerboard corner,
/// a filled circle with a hard edge, a hard-edged bar and one-pixel lines (horizontal,
/// vertical, diagonal), RGB.
fn demo_image(side: usize) -> Array3<u8> {
    let n = side.max(1) as f32;
    let mut img = Array3::from_shape_fn((side, side, 3), |(y, x, c)| {
        let (fx, fy) = (x as f32 / n, y as f32 / n);
        let v = match c {
            0 => 40.0 + 180.0 * fx,
            1 => 40.0 + 180.0 * fy,
            _ => 200.0 - 120.0 * (fx + fy) / 2.0,
        };
        v as u8
    });
    let at = |f: f32| (f * n) as usize;
    let mut paint = |y: usize, x: usize, rgb: [u8; 3]| {
        if y < side && x < side {
            for (c, v) in rgb.into_iter().enumerate() {
                img[[y, x, c]] = v;
            }
        }
    };
    let square = (side / 32).max(1);
    for y in 0..at(0.25) {
        for x in 0..at(0.25) {
            let v = if (y / square + x / square).is_multiple_of(2) {
                250
            } else {
                10
            };
            paint(y, x, [v; 3]);
        }
    }
    let (cy, cx, r) = (0.55 * n, 0.6 * n, 0.22 * n);
    for y in 0..side {
        for x in 0..side {
            if (y as f32 + 0.5 - cy).hypot(x as f32 + 0.5 - cx) <= r {
                paint(y, x, [225, 70, 40]);
            }
        }
    }
    for y in at(0.82)..at(0.94) {
        for x in at(0.55)..at(0.95) {
            paint(y, x, [20, 30, 120]);
        }
    }
    for k in 0..5 {
        let x = at(0.06) + k * (side / 40).max(2);
        for y in at(0.35)..at(0.95) {
            paint(y, x, [255, 255, 255]);
        }
        let y = at(0.3) + k * (side / 40).max(2);
        for x in at(0.3)..at(0.95) {
            paint(y, x, [0, 0, 0]);
        }
    }
    for d in at(0.3)..at(0.8) {
        paint(d, d - at(0.2), [255, 255, 0]);
    }
    img
}

/// Writes the demo picture and it filtered with a few classic masks and ghost-cell modes
/// into `dir`, on the GPU where there is one (a picture whose call fails there is made
/// by the reference, and says so), else by the CPU reference. Prints the paths.
fn demo_pictures(gpu: Option<&Gpu>, dir: &Path, side: usize) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let img = demo_image(side);
    let input = dir.join("demo-input.png");
    imageio::write_image(&input, &img.view())?;
    let cases = [
        ("gaussian", masks::gaussian(2.0)?, Mode::Reflect),
        ("sobel_x", masks::sobel_x(), Mode::Nearest),
        ("sharpen", masks::sharpen(), Mode::Mirror),
        ("box", masks::box_filter(4)?, Mode::Wrap),
        ("emboss", masks::emboss(), Mode::Zero),
    ];
    let mut written = vec![(input, "the generated input".to_string())];
    let start = Instant::now();
    for (name, mask, mode) in cases {
        let opts = Options {
            variant: Variant::Auto,
            mode,
        };
        let (out, by) = match gpu.map(|g| g.correlate_image(img.view(), mask.view(), opts)) {
            Some(Ok(out)) => (out, "GPU".to_string()),
            Some(Err(e)) => (
                reference::correlate_image(img.view(), mask.view(), mode),
                format!("CPU reference: the GPU call failed: {e}"),
            ),
            None => (
                reference::correlate_image(img.view(), mask.view(), mode),
                "CPU reference".into(),
            ),
        };
        let path = dir.join(format!("demo-{name}-{}.png", mode.name()));
        imageio::write_image(&path, &out.view())?;
        let (k, _) = mask.dim();
        written.push((path, format!("{name} {k}x{k}, mode {}, by the {by}", mode.name())));
    }
    match gpu {
        Some(_) => println!("\nPictures ({side}x{side} RGB, made on the GPU unless a line says otherwise):"),
        None => println!(
            "\nPictures ({side}x{side} RGB) made by the CPU reference (no GPU), in {:.1} s:",
            start.elapsed().as_secs_f64()
        ),
    }
    for (path, what) in written {
        println!("  {}  ({what})", path.display());
    }
    Ok(())
}

/// The ghost-cell mode called `name`; unknown names list the valid ones.
fn parse_mode(name: &str, cval: f32) -> Result<Mode, Error> {
    Mode::from_name(name, cval).ok_or_else(|| Error::UnknownMode {
        name: name.to_string(),
        known: Mode::ALL.map(Mode::name).join(", "),
    })
}

/// The variant called `name`, one that filters images: `auto` or an image family.
fn parse_image_variant(name: &str) -> Result<Variant, Error> {
    let v = Variant::from_name(name).ok_or_else(|| Error::UnknownVariant {
        name: name.to_string(),
        known: std::iter::once(Variant::Auto)
            .chain(Variant::IMAGES)
            .map(Variant::name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    match v {
        Variant::Auto => Ok(v),
        v if v.is_image() => Ok(v),
        v => Err(Error::NotForImages { variant: v }),
    }
}

/// Whether `a` and `b` are the same existing file or directory.
fn same_path(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// What `filter` does to each image: the mask, how, and where.
struct Filter {
    mask: Array2<f32>,
    opts: Options,
    convolve: bool,
    gpu: Option<Gpu>,
}

impl Filter {
    /// Filters the color channels of `img` and keeps its alpha channel (the last of
    /// gray+alpha and RGBA) as it is.
    fn apply(&self, img: &Array3<u8>) -> Result<Array3<u8>, Error> {
        let c = img.dim().2;
        let color = if c % 2 == 0 { c - 1 } else { c };
        let filtered = self.filter(img.slice(s![.., .., ..color]), self.mask.view())?;
        if color == c {
            return Ok(filtered);
        }
        let mut out = img.clone();
        out.slice_mut(s![.., .., ..color]).assign(&filtered);
        Ok(out)
    }

    fn filter(&self, img: ArrayView3<u8>, mask: ArrayView2<f32>) -> Result<Array3<u8>, Error> {
        let mode = self.opts.mode;
        match (&self.gpu, self.convolve) {
            (Some(g), false) => g.correlate_image(img, mask, self.opts),
            (Some(g), true) => g.convolve_image(img, mask, self.opts),
            (None, false) => Ok(reference::correlate_image(img, mask, mode)),
            (None, true) => Ok(reference::convolve_image(img, mask, mode)),
        }
    }

    /// Reads `input`, filters it, writes `output` (whole or not at all).
    fn file(&self, input: &Path, output: &Path) -> Result<(usize, usize, usize), Error> {
        if same_path(input, output) {
            return Err(Error::OutputIsInput {
                path: output.to_path_buf(),
            });
        }
        imageio::check_output_path(output)?;
        let img = imageio::read_image(input)?;
        let out = self.apply(&img)?;
        imageio::write_image(output, &out.view())?;
        Ok(img.dim())
    }
}

/// `gpuconv filter`: everything that can be checked without the images first (names,
/// mask), then one file or every image file of a directory.
fn filter(a: &FilterArgs) -> Result<(), Error> {
    let mode = parse_mode(&a.mode, a.cval)?;
    let variant = parse_image_variant(&a.variant)?;
    let mask = match &a.mask_file {
        Some(path) => masks::load_mask(path)?,
        None => masks::by_name(&a.mask, a.sigma, a.radius)?,
    };
    let gpu = match Gpu::new() {
        Ok(g) => Some(g),
        Err(Error::NoGpu(why)) => {
            let ignored = if variant == Variant::Auto {
                ""
            } else {
                " (--variant applies to the GPU only)"
            };
            eprintln!("NO GPU ({why}): filtering with the CPU reference{ignored}");
            None
        }
        Err(e) => return Err(e),
    };
    let (ky, kx) = mask.dim();
    let radius = gpuconv::conv::mask_radius(&[ky, kx])?;
    let taps: Vec<f32> = mask.iter().copied().collect();
    let rank1 = gpuconv::conv::rank1_axes(&taps, &[ky, kx]).is_some();
    // The image kernels take 1 to 4 channels alike: 1 stands for all here.
    let gpu = match (gpu, variant.resolve_image_call(radius, rank1, 1, mode)) {
        (Some(g), Ok(_)) => Some(g),
        // `auto` promises an answer: where no kernel does this mask and mode, the
        // reference gives it. A named variant that cannot is the caller's error.
        (Some(_), Err(e)) if variant == Variant::Auto => {
            eprintln!("no GPU kernel runs this mask and mode ({e}): filtering with the CPU reference");
            None
        }
        (Some(_), Err(e)) => return Err(e),
        (None, _) => None,
    };
    let f = Filter {
        mask,
        opts: Options { variant, mode },
        convolve: a.convolve,
        gpu,
    };
    let how = format!(
        "{} {ky}x{kx}, mode {}, {}, on the {}",
        if a.mask_file.is_some() {
            "mask file"
        } else {
            a.mask.as_str()
        },
        mode.name(),
        if a.convolve { "convolved" } else { "correlated" },
        if f.gpu.is_some() { "GPU" } else { "CPU" },
    );
    if !a.input.is_dir() {
        let (h, w, c) = f.file(&a.input, &a.output)?;
        println!("wrote {} ({w}x{h}, {c} channels; {how})", a.output.display());
        return Ok(());
    }
    filter_dir(&f, &a.input, &a.output, &how)
}

/// Every PNG/JPEG file of `dir` (sorted, not recursive) into `out` under the same name;
/// a file that fails is reported and the others go on.
fn filter_dir(f: &Filter, dir: &Path, out: &Path, how: &str) -> Result<(), Error> {
    let read_err = |source| Error::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let path = entry.map_err(read_err)?.path();
        if path.is_file() && imageio::has_image_extension(&path) {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Error::NoImages { dir: dir.to_path_buf() });
    }
    std::fs::create_dir_all(out).map_err(|source| Error::Write {
        path: out.to_path_buf(),
        source,
    })?;
    if same_path(dir, out) {
        return Err(Error::OutputIsInput {
            path: out.to_path_buf(),
        });
    }
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let mut failed = 0;
    for path in &files {
        let name = path.file_name().expect("a file from read_dir");
        bar.set_message(name.to_string_lossy().into_owned());
        if let Err(e) = f.file(path, &out.join(name)) {
            failed += 1;
            bar.suspend(|| eprintln!("{}: failed: {e}", path.display()));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let done = files.len() - failed;
    println!("wrote {done} of {} images into {} ({how})", files.len(), out.display());
    if failed > 0 {
        return Err(Error::BatchFailed {
            failed,
            total: files.len(),
        });
    }
    Ok(())
}
