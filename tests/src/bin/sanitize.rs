//! Launches every PTX entry of the table once per ghost-cell mode it implements (the fast
//! entries from their second case with the mask's taps baked into a module of their own), on small
//! multi-tile inputs with odd sizes (the fast kernels once more on a large one), and checks each result against the CPU reference:
//! the program `cargo xtask device sanitize` runs under compute-sanitizer's memcheck,
//! racecheck, synccheck and initcheck. Entries whose blocks loop over tiles (persistent)
//! get inputs with more tiles than the GPU holds blocks, so the copy ring wraps; the image
//! entries' persistent grids are capped at a few blocks instead (`Gpu::limit_persistent_grid`).
use gpuconv::{Gpu, Mode, Options, PixelKind, Variant};
use gpuconv_tests::{check_against_reference, random_array, random_vec};
use layout::families::conv2d_fast::{byte_tile_h, byte_tile_w};
use layout::{Entry, Family, Pixels, Radii};
use ndarray::IxDyn;

/// Shapes, outermost axis first: several tiles of every kernel along every axis, no side
/// a multiple of a tile or of 4. `loops`: more tiles than an H200 holds blocks of the
/// fast kernels, so persistent blocks go round their copy ring.
/// `aligned`: rows a multiple of 4 floats (not of a tile), which `conv2d_fast`,
/// `conv2d_separable` and the 3D walks stage with tensor copies (their layouts'
/// `tile_map`); 3D: three 128-wide tiles across, one on neither side.
/// `r`: the mask's x radius (the separable family's chunks grow with it).
fn shape(f: &Family, loops: bool, aligned: bool, r: u32) -> Vec<usize> {
    // At least two chunks of the separable family's rows (at most 512 up to r = 16, 2048
    // past it).
    let two_chunks = layout::families::conv2d_separable::chunk(r).max(512) as usize + 88;
    match (f.dim, loops) {
        (1, false) => vec![3001],
        (1, true) => vec![1_500_001],
        (2, false) if aligned => vec![67, 260],
        (2, false) => vec![67, 259],
        (2, true) if aligned && f.separable => vec![two_chunks, 132],
        (2, true) if aligned => vec![577, 2000],
        // 16 x 19 tiles of 128 x 32.
        (2, true) if !f.separable => vec![577, 2001],
        // Two chunks of two 128-column strips.
        (2, true) => vec![two_chunks, 131],
        // Several chunks of depth; two tiles down at every radius (64 rows at
        // `conv3d_separable` r = 4, else at most 32); two 128-wide tiles.
        (3, _) if aligned => vec![45, 70, 260],
        _ => vec![45, 70, 131],
    }
}

/// The mask radii (x first) that make the host launch `e`: its compiled radius on every
/// axis, or, for a run-time entry, radii that no compiled entry takes.
fn radius_for(f: &'static Family, e: &Entry) -> [u32; 3] {
    let mut r = [0u32; 3];
    match (e.radius, f.radii) {
        (Some(c), _) => r[..f.dim].fill(c),
        // Rectangular radii within every tile limit: the run-time entry.
        (None, Radii::Both { .. }) => {
            for (axis, v) in r[..f.dim].iter_mut().enumerate() {
                *v = (axis as u32 + 1).min(f.tile_limit.0);
            }
        }
        (None, _) => r[..f.dim].fill(2),
    }
    r
}

/// Blocks of an image entry's persistent grid (odd, so no tile count is a multiple).
const PERSISTENT_BLOCKS: u32 = 5;

/// An image entry on an image of its channel count (the textbook one: 3) of about 2100
/// elements a row (3 of image_fast's 1024-element columns: one without a border column),
/// in each of its [`rounds`]: 41 rows that several blocks walk down, or for the tiled
/// families (image_mma, image_patches) 140 rows, their 64-row tiles, one row of them
/// wholly inside (image_patches at r <= 1 with channels: its u8 tiles' 128, 268 rows);
/// image_patches at odd channel counts 2304 bytes a row (below).
fn run_image(gpu: &Gpu, f: &'static Family, e: &Entry, radius: [u32; 3], mode: Mode, seed: u64) -> Result<(), String> {
    let channels = e.channels.unwrap_or(3);
    assert_eq!(
        f.entry_for(radius, channels),
        *e,
        "{e}: radii {radius:?} reach another entry"
    );
    let v = Variant::from_name(f.name).expect("a variant per family");
    let m = random_array((2 * radius[1] as usize + 1, 2 * radius[0] as usize + 1), seed + 1);
    let tiled = matches!(f.name, "image_mma" | "image_patches");
    // Two tiles and a bit down: 64-row tiles, or image_patches' u8 byte ring's if taller.
    let tile_h = match (f.name, e.radius) {
        ("image_patches", Some(r)) => byte_tile_h(r, channels).max(64) as usize,
        _ => 64,
    };
    // image_patches at odd channel counts: rows of 9 of its widest u8 tiles (2304 bytes),
    // a multiple of 16, of 3 and of every u8 tile's width, where wrap copies the groups
    // beside the plane whole and the other mapping modes gather the border pixel into
    // place (`stage::group16`).
    let width = if f.name == "image_patches" && channels % 2 == 1 {
        9 * byte_tile_w(1, 3) as usize / channels as usize
    } else {
        2100 / channels as usize + 1
    };
    let dim = (if tiled { 2 * tile_h + 12 } else { 41 }, width, channels as usize);
    // Persistent grids of PERSISTENT_BLOCKS blocks: such an image has several times more
    // tiles, so each block walks its ring round, and where the tiles are handed out by
    // the counter (`layout::families::conv2d_fast::counted`) most come from it.
    gpu.limit_persistent_grid(Some(PERSISTENT_BLOCKS));
    let result = rounds(f).iter().try_for_each(|&(kind, odd_pitch)| {
        match kind {
            PixelKind::F32 => image_round::<f32>(gpu, v, dim, m.view(), mode, odd_pitch, seed),
            PixelKind::U8 => image_round::<u8>(gpu, v, dim, m.view(), mode, odd_pitch, seed),
        }
        .map_err(|err| format!("{e} {mode:?} {kind:?} (odd pitch: {odd_pitch}): {err}"))
    });
    gpu.limit_persistent_grid(None);
    result
}

/// The pixel types an image family's entries run with, each with the driver's pitch or
/// an odd one (`true`): f32 with the driver's, u8 with an odd one; f32-only families with
/// both, u8-only ones with the odd one (image_mma, whose integer path takes tensor copies,
/// with the driver's too); image_patches, whose u8 tiles inside
/// the image are copied as bytes at the driver's pitch, with all four.
fn rounds(f: &Family) -> &'static [(PixelKind, bool)] {
    use PixelKind::{F32, U8};
    match f.pixels {
        Pixels::Both if f.name == "image_patches" => &[(F32, false), (F32, true), (U8, false), (U8, true)],
        Pixels::Both => &[(F32, false), (U8, true)],
        // image_mma's integer path (r = 1, 2) takes tensor copies at the driver's pitch.
        Pixels::U8 if f.name == "image_mma" => &[(U8, false), (U8, true)],
        Pixels::U8 => &[(U8, true)],
        Pixels::F32 => &[(F32, false), (F32, true)],
    }
}

/// One image through `v`: uploaded with the driver's pitch or an odd one (3 elements
/// past the row), filtered, checked against the reference.
fn image_round<T: gpuconv::Pixel>(
    gpu: &Gpu,
    v: Variant,
    dim: (usize, usize, usize),
    m: ndarray::ArrayView2<f32>,
    mode: Mode,
    odd_pitch: bool,
    seed: u64,
) -> Result<(), String> {
    let img = gpuconv_tests::random_image::<T>(dim, seed);
    let pitch = (dim.1 * dim.2 + 3) * std::mem::size_of::<T>();
    let text = |e: gpuconv::Error| e.to_string();
    let (n, mut p) = if odd_pitch {
        (
            gpu.upload_image_pitched(img.view(), pitch).map_err(text)?,
            gpu.alloc_image_pitched(dim.0, dim.1, dim.2, pitch).map_err(text)?,
        )
    } else {
        (
            gpu.upload_image(img.view()).map_err(text)?,
            gpu.alloc_image(dim.0, dim.1, dim.2).map_err(text)?,
        )
    };
    gpu.correlate_image_device(&n, m, Options { variant: v, mode }, &mut p)
        .map_err(text)?;
    let got = p.to_host().map_err(text)?;
    gpuconv_tests::check_image_against_reference(got.view(), img.view(), m, mode)
}

fn run(
    gpu: &Gpu,
    f: &'static Family,
    e: &Entry,
    radius: [u32; 3],
    mode: Mode,
    (loops, aligned): (bool, bool),
    seed: u64,
) -> Result<(), String> {
    assert_eq!(f.entry(radius), *e, "{e}: radii {radius:?} reach another entry");
    let v = Variant::from_name(f.name).expect("a variant per family");
    let shape = shape(f, loops, aligned, radius[0]);
    let n = random_array(IxDyn(&shape), seed);
    let mask_shape: Vec<usize> = (0..f.dim).rev().map(|a| 2 * radius[a] as usize + 1).collect();
    let m = if f.separable {
        // A rank-1 mask: one 1D mask per axis, multiplied.
        let axes: Vec<Vec<f32>> = (mask_shape.iter().enumerate())
            .map(|(a, &k)| random_vec(k, seed + 1 + a as u64))
            .collect();
        gpuconv_tests::outer(&axes)
    } else {
        random_array(IxDyn(&mask_shape), seed + 1)
    };
    let got = gpu
        .correlate(n.view(), m.view(), Options { variant: v, mode })
        .map_err(|err| format!("{e} {mode:?}: {err}"))?;
    check_against_reference(got.view(), n.view(), m.view(), mode).map_err(|err| format!("{e} {mode:?}: {err}"))
}

/// A family to launch, from an argument `NAME` or `NAME:LO-HI` (its entries of compiled
/// radius LO..=HI only, so that racecheck's slow runs take the entries a change touched).
fn parse_only(arg: &str) -> Option<(String, core::ops::RangeInclusive<u32>)> {
    let (name, radii) = match arg.split_once(':') {
        None => (arg, 0..=u32::MAX),
        Some((name, span)) => {
            let (lo, hi) = span.split_once('-')?;
            (name, lo.parse().ok()?..=hi.parse().ok()?)
        }
    };
    layout::families::ALL
        .iter()
        .any(|f| f.name == name)
        .then(|| (name.to_string(), radii))
}

/// Arguments: the families to launch (all if none), e.g. only the ones whose PTX changed
/// since the last run of every entry.
fn main() {
    let mut only = Vec::new();
    for arg in std::env::args().skip(1) {
        match parse_only(&arg) {
            Some(o) => only.push(o),
            None => {
                eprintln!("sanitize: no family {arg:?} (NAME or NAME:LO-HI)");
                std::process::exit(2);
            }
        }
    }
    let gpu = Gpu::new().unwrap_or_else(|e| panic!("sanitize needs a GPU: {e}"));
    let (mut launches, mut entries, mut failures) = (0, 0, Vec::new());
    for (i, &f) in layout::families::ALL.iter().enumerate() {
        let spans: Vec<_> = only
            .iter()
            .filter(|(n, _)| n == f.name)
            .map(|(_, r)| r.clone())
            .collect();
        if !only.is_empty() && spans.is_empty() {
            continue;
        }
        let mut modes = if f.all_modes() {
            Mode::ALL.to_vec()
        } else {
            vec![Mode::Zero]
        };
        // image_patches' u8 tiles at r <= 1 hold ghost cells as bytes, but under a
        // constant fill that is not one (Mode::ALL's is 0), which takes the f32 path.
        if f.name == "image_patches" {
            modes.push(Mode::Constant(1.5));
        }
        // image_mma's integer path (r = 1, 2) stages a fill a byte holds in its ghost
        // cells, and adds any other's term to the border outputs.
        if f.name == "image_mma" {
            modes.extend([Mode::Constant(7.0), Mode::Constant(-7.0)]);
        }
        for e in f.entries() {
            // A run-time entry (no compiled radius) is in every span.
            if !spans.is_empty() && !e.radius.is_none_or(|r| spans.iter().any(|s| s.contains(&r))) {
                continue;
            }
            entries += 1;
            let mut radii = vec![radius_for(f, &e)];
            // conv1d_tiled loads halos wider than its block with a strided loop.
            if f.name == "conv1d_tiled" && e.radius.is_none() {
                radii.push([1500, 0, 0]);
            }
            for r in radii {
                if f.image {
                    for &mode in &modes {
                        launches += rounds(f).len();
                        if let Err(msg) = run_image(&gpu, f, &e, r, mode, 2000 + i as u64) {
                            failures.push(msg);
                        }
                    }
                    continue;
                }
                // Every mode on the small shapes; the ring's wrap-around on a large one.
                // The separable family: its chunks' seams on a tall shape for small radii,
                // and two modes past radius 8 (the f64 reference of a 65 x 65 mask is slow);
                // past r = 16, whose chunks are 2048 rows, two of them by tensor copies and
                // by threads.
                let large = (f.name.ends_with("_fast") || (f.separable && r[0] <= 4)).then_some((Mode::Zero, true));
                let modes: &[Mode] = if f.separable && r[0] > 8 {
                    &[Mode::Zero, Mode::Reflect]
                } else {
                    &modes
                };
                let mut cases: Vec<(Mode, (bool, bool))> = modes.iter().map(|&m| (m, (false, false))).collect();
                cases.extend(large.map(|(m, l)| (m, (l, false))));
                // Tensor-copied tiles, steps and planes (`layout::tile_map`): every mode
                // (2D border tiles staged by copies beside them, the 3D walks' ghost cells
                // written after the copies), and the fast families' rings wrapping around.
                let copied = e.radius.and_then(|r| layout::tile_map::tile_box(f.name, r, 1));
                if copied.is_some() && !f.image {
                    cases.extend(modes.iter().map(|&m| (m, (false, true))));
                    if !f.separable {
                        cases.extend([(Mode::Zero, (true, true)), (Mode::Reflect, (true, true))]);
                    } else if r[0] > 16 {
                        cases.extend([(Mode::Zero, (true, true)), (Mode::Reflect, (true, false))]);
                    }
                }
                for (mode, shape) in cases {
                    launches += 1;
                    if let Err(msg) = run(&gpu, f, &e, r, mode, shape, 1000 + i as u64) {
                        failures.push(msg);
                    }
                }
            }
        }
    }
    // The FMA probe, the module's one other entry.
    let mut out = gpu.alloc(4 * 256).expect("alloc");
    gpu.launch_fma_probe(&mut out, 4).expect("probe");
    gpu.synchronize().expect("sync");
    let probe = out.to_host().expect("download");
    if !probe.iter().all(|v| v.is_finite()) {
        failures.push("roofline_fma: non-finite output".into());
    }
    // An entry's cases share its mask, so every case after its first runs with the taps
    // baked in (`Gpu::set_baked_taps`): those modules are under the tools too.
    println!(
        "sanitize: {} launches over {} entries and the FMA probe ({} with taps baked in); {} disagree with the reference",
        launches + 1,
        entries,
        gpu.baked_launches(),
        failures.len()
    );
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAILED {f}");
        }
        std::process::exit(1);
    }
}
