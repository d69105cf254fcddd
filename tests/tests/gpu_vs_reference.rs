//! Every variant against the CPU reference (`gpuconv::reference`), element-wise within
//! `reference::tolerance(Σ|terms|, taps)`, on random shapes and radii (proptest, one
//! test per family of the table); plus strided, reversed and permuted views, `Auto`
//! across the fast kernels' range, reuse of device output buffers, and large inputs.
use gpuconv::{reference, Gpu, Mode, Options, Pixel, PixelKind, Variant};
use gpuconv_tests::{
    assert_matches_reference, case_for, case_image, check_against_reference, check_close,
    check_image_against_reference, gpu, mode_for, proptest_config, random_array, random_image, rank1_if_needed, Case,
    ImageCase,
};
use ndarray::{s, Array, ArrayD, ArrayView, ArrayViewD, Dimension, IxDyn};
use proptest::test_runner::{TestCaseError, TestRunner};

/// Cases per variant: 40 keeps the whole suite to a couple of minutes on one GPU.
const CASES: u32 = 40;

/// The proptest of one variant: random cases of its dimension within its limits, in
/// every ghost-cell mode it implements (images: random shapes, channels, pitches and
/// pixel types).
fn prop(v: Variant) {
    if v.is_image() {
        return prop_image(v);
    }
    let gpu = gpu();
    let mut runner = TestRunner::new(proptest_config(CASES));
    let result = runner.run(&(case_for(v), mode_for(v)), |(c, mode): (Case, Mode)| {
        let (n, m) = (c.input(), c.mask_for(v));
        let got = gpu
            .correlate(n.view(), m.view(), Options { variant: v, mode })
            .map_err(|e| TestCaseError::fail(format!("{v} {mode:?} returned an error: {e}")))?;
        check_against_reference(got.view(), n.view(), m.view(), mode)
            .map_err(|e| TestCaseError::fail(format!("{mode:?}: {e}")))
    });
    if let Err(e) = result {
        panic!("{}: {e}", v.name());
    }
}

/// One image case on `v`: upload with the case's pitch (the output with the same), filter
/// on the device, compare with the reference.
fn image_case<T: Pixel>(gpu: &gpuconv::Gpu, v: Variant, c: &ImageCase, mode: Mode) -> Result<(), String> {
    let img = random_image::<T>((c.height, c.width, c.channels), c.seed);
    let m = c.mask();
    let size = std::mem::size_of::<T>();
    let fail = |e: gpuconv::Error| format!("{v} {mode:?} {c:?}: {e}");
    let (input, mut output) = match c.extra_pitch {
        None => (
            gpu.upload_image(img.view()).map_err(fail)?,
            gpu.alloc_image(c.height, c.width, c.channels).map_err(fail)?,
        ),
        Some(e) => {
            let pitch = (c.width * c.channels + e) * size;
            (
                gpu.upload_image_pitched(img.view(), pitch).map_err(fail)?,
                gpu.alloc_image_pitched(c.height, c.width, c.channels, pitch)
                    .map_err(fail)?,
            )
        }
    };
    gpu.correlate_image_device(&input, m.view(), Options { variant: v, mode }, &mut output)
        .map_err(fail)?;
    let got = output.to_host().map_err(fail)?;
    check_image_against_reference(got.view(), img.view(), m.view(), mode)
        .map_err(|e| format!("{v} {mode:?} {c:?}: {e}"))
}

fn prop_image(v: Variant) {
    let gpu = gpu();
    let u8_only = !v.takes_pixels(PixelKind::F32);
    let f32_only = !v.takes_pixels(PixelKind::U8);
    let mut runner = TestRunner::new(proptest_config(CASES));
    let result = runner.run(
        &(case_image(v.max_radius().0), mode_for(v)),
        |(c, mode): (ImageCase, Mode)| {
            // Families of 64-row tiles (image_mma, image_patches): half the cases as drawn
            // (down to one row), half 128 rows taller, so that tiles lie wholly inside.
            let tiled = matches!(v, Variant::ImageMma | Variant::ImagePatches);
            let taller = if tiled && c.seed % 2 == 1 { 128 } else { 0 };
            let c = ImageCase {
                height: c.height + taller,
                ..c
            };
            // Families of one pixel type (image_mma: u8) take only that type.
            let c = if u8_only {
                ImageCase { u8: true, ..c }
            } else if f32_only {
                ImageCase { u8: false, ..c }
            } else {
                c
            };
            let r = if c.u8 {
                image_case::<u8>(&gpu, v, &c, mode)
            } else {
                image_case::<f32>(&gpu, v, &c, mode)
            };
            r.map_err(TestCaseError::fail)
        },
    );
    if let Err(e) = result {
        panic!("{}: {e}", v.name());
    }
}

/// One `#[test]` per variant, named as `Variant::name()`; `PROPTESTED` lists them so that
/// `every_variant_has_a_proptest` can prove none is missing.
macro_rules! variant_proptests {
    ($($name:ident => $variant:expr),* $(,)?) => {
        $(
            #[test]
            #[cfg_attr(not(gpu_present), ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)")]
            fn $name() {
                prop($variant);
            }
        )*
        const PROPTESTED: &[(&str, Variant)] = &[$((stringify!($name), $variant)),*];
    };
}

variant_proptests! {
    conv1d_basic => Variant::Conv1dBasic,
    conv1d_const => Variant::Conv1dConst,
    conv1d_tiled => Variant::Conv1dTiled,
    conv1d_tiled_cached => Variant::Conv1dTiledCached,
    conv1d_fast => Variant::Conv1dFast,
    conv2d_basic => Variant::Conv2dBasic,
    conv2d_const => Variant::Conv2dConst,
    conv2d_tiled_in => Variant::Conv2dTiledIn,
    conv2d_tiled_cached => Variant::Conv2dTiledCached,
    conv2d_fast => Variant::Conv2dFast,
    conv2d_separable => Variant::Conv2dSeparable,
    conv3d_basic => Variant::Conv3dBasic,
    conv3d_const => Variant::Conv3dConst,
    conv3d_tiled_in => Variant::Conv3dTiledIn,
    conv3d_tiled_cached => Variant::Conv3dTiledCached,
    conv3d_fast => Variant::Conv3dFast,
    conv3d_separable => Variant::Conv3dSeparable,
    image_tiled => Variant::ImageTiled,
    image_fast => Variant::ImageFast,
    image_patches => Variant::ImagePatches,
    image_mma => Variant::ImageMma,
}

/// Runs without a GPU: the proptests above cover exactly the table's families, each
/// under its own name.
#[test]
fn every_variant_has_a_proptest() {
    for v in Variant::ALL {
        assert!(
            PROPTESTED.iter().any(|(_, p)| p == v),
            "variant {} has no proptest in gpu_vs_reference.rs",
            v.name()
        );
    }
    for (name, v) in PROPTESTED {
        assert_eq!(*name, v.name(), "proptest named after Variant::name()");
    }
    assert_eq!(PROPTESTED.len(), Variant::ALL.len());
}

// ---------------------------------------------------------------- Auto

/// What `Auto` must pick (README, "Variant::Auto"): radii inside and outside the fast
/// kernels' range and past the `.const` symbols, per dimension.
fn auto_expected(dim: usize, r: usize) -> Variant {
    match (dim, r) {
        (1, 0..=16) | (2, 0) => Variant::Conv1dFast,
        (3, 0) => Variant::Conv2dFast,
        (1, 17..=2047) => Variant::Conv1dTiled,
        (1, _) => Variant::Conv1dBasic,
        (2, 0..=8) => Variant::Conv2dFast,
        (2, 9..=15) => Variant::Conv2dTiledIn,
        (2, 16..=31) => Variant::Conv2dConst,
        (2, _) => Variant::Conv2dBasic,
        (3, 0..=3) => Variant::Conv3dFast,
        (3, 4..=7) => Variant::Conv3dConst,
        _ => Variant::Conv3dBasic,
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn auto_matches_reference_inside_and_outside_fast_range() {
    let gpu = gpu();
    let cases: [(&[usize], &[&[usize]]); 3] = [
        (
            &[0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 20, 100, 1000, 2047, 2048, 2500],
            &[&[1], &[37], &[1023], &[1024], &[3001]],
        ),
        (
            &[0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 31, 32, 35],
            &[&[1, 1], &[33, 130], &[70, 257]],
        ),
        (&[0, 1, 2, 3, 4, 7, 8], &[&[1, 1, 1], &[9, 17, 130], &[66, 5, 20]]),
    ];
    for (dim, (radii, shapes)) in cases.iter().enumerate().map(|(i, c)| (i + 1, c)) {
        for (i, &r) in radii.iter().enumerate() {
            let expected = auto_expected(dim, r);
            assert_eq!(Variant::Auto.resolve(dim, r).unwrap(), expected, "{dim}D radius {r}");
            for shape in *shapes {
                let n = random_array(IxDyn(shape), 100 + i as u64);
                let m = random_array(IxDyn(&vec![2 * r + 1; dim]), 200 + i as u64);
                let dn = gpu.upload(n.view()).unwrap();
                let mut dp = gpu.alloc(dn.raw_dim()).unwrap();
                let ran = gpu.conv_device(&dn, m.view(), Variant::Auto, &mut dp).unwrap();
                assert_eq!(ran, expected, "conv_device reports what Auto ran ({dim}D radius {r})");
                let what = format!("Auto (ran {ran}) radius {r} shape {shape:?}");
                assert_matches_reference(dp.to_host().unwrap().view(), n.view(), m.view(), &what);
            }
        }
    }
}

// ---------------------------------------------------------------- strides

/// `variants` on every view in `views` (any strides) equal the same call on a
/// contiguous copy, and the reference.
fn views_match_contiguous_copies<D: Dimension>(
    variants: impl Iterator<Item = Variant>,
    views: &[ArrayView<f32, D>],
    masks: &[ArrayView<f32, D>],
) {
    let gpu = gpu();
    for v in variants.chain([Variant::Auto]) {
        for m in masks {
            let m = rank1_if_needed(v, m.view());
            for n in views {
                let strided = gpu.conv(n.view(), m.view(), v).unwrap_or_else(|e| panic!("{v}: {e}"));
                let contiguous = gpu
                    .conv(n.as_standard_layout().view(), m.as_standard_layout().view(), v)
                    .unwrap_or_else(|e| panic!("{v}: {e}"));
                assert_eq!(strided, contiguous, "{v}: strided view vs contiguous copy");
                assert_matches_reference(
                    strided.view(),
                    n.view(),
                    m.view(),
                    &format!("{v}, strides {:?}", n.strides()),
                );
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn strided_1d_views_match_contiguous_copy() {
    let base = random_array(2 * 2500 + 1, 7);
    let mask = random_array(17, 8); // step 2 -> 9 taps (radius 4); [5..10] -> 5 taps
    views_match_contiguous_copies(
        Variant::ALL_1D.into_iter(),
        &[base.slice(s![..;2]), base.slice(s![..;-1]), base.slice(s![1..;3])],
        &[mask.slice(s![..;2]), mask.slice(s![5..10])],
    );
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn strided_2d_views_match_contiguous_copy() {
    let base = random_array((150, 90), 11); // transposed: 90 x 150
    let mask = random_array((5, 5), 12); // not symmetric: transposing it matters
    let rect = random_array((3, 7), 13);
    views_match_contiguous_copies(
        Variant::ALL_2D.into_iter(),
        &[base.t(), base.slice(s![..;2, 1..;3]), base.slice(s![..;-1, ..])],
        &[mask.view(), mask.t(), rect.t()],
    );
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn strided_reversed_and_permuted_3d_views_match_contiguous_copy() {
    let base = random_array((40, 30, 140), 14);
    let mask = random_array((3, 3, 3), 15);
    let rect = random_array((1, 3, 5), 16);
    let permuted = base.view().permuted_axes([2, 0, 1]); // 140 x 40 x 30
    views_match_contiguous_copies(
        Variant::ALL_3D.into_iter(),
        &[
            permuted,
            base.slice(s![..;-1, .., ..;-2]),
            base.slice(s![1..;3, ..;2, 5..]),
        ],
        &[mask.view(), rect.view(), rect.view().permuted_axes([2, 1, 0])],
    );
}

// ---------------------------------------------------------------- device API

/// Output buffers start as NaN: an output element a kernel forgets to write stays NaN and
/// fails the tolerance check. The same buffers are reused across variants and masks, and
/// the input buffer is never written.
fn device_output_reuse<D: Dimension>(shape: D, radii: &[usize], seed: u64) {
    let gpu = gpu();
    let dim = shape.ndim();
    let n = random_array(shape.clone(), seed);
    let other = random_array(shape.clone(), seed + 1);
    let dn = gpu.upload(n.view()).unwrap();
    let dother = gpu.upload(other.view()).unwrap();
    let mut dp = gpu.upload(Array::from_elem(shape, f32::NAN).view()).unwrap();
    for (i, &r) in radii.iter().enumerate() {
        let m = random_array(IxDyn(&vec![2 * r + 1; dim]), seed + 10 + i as u64)
            .into_dimensionality::<D>()
            .unwrap();
        for v in Variant::all_of_dim(dim).chain([Variant::Auto]) {
            if v.resolve(dim, r).is_err() {
                continue;
            }
            for (input, host) in [(&dn, &n), (&dother, &other)] {
                gpu.conv_device(input, m.view(), v, &mut dp)
                    .unwrap_or_else(|e| panic!("{v}: {e}"));
                let what = format!("{v} r={r}, reused output");
                assert_matches_reference(dp.to_host().unwrap().view(), host.view(), m.view(), &what);
            }
        }
        assert_eq!(dn.to_host().unwrap(), n, "conv_device wrote to its input");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn device_api_reuses_output_buffers() {
    device_output_reuse(ndarray::Ix1(2 * 1024 + 3), &[3, 0, 16, 40, 1], 31);
    device_output_reuse(ndarray::Ix2(67, 259), &[2, 0, 8, 5, 15, 1], 41);
    device_output_reuse(ndarray::Ix3(66, 19, 131), &[1, 0, 3, 2, 5], 51);
}

/// Masks alternate on one Gpu (the `.const` symbols and the global mask buffer are
/// cached by value): every call must see its own mask, never the previous one.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn alternating_masks_each_take_effect() {
    let gpu = gpu();
    for (shape, sides) in [(vec![1500], 1), (vec![40, 140], 2), (vec![20, 18, 70], 3)] {
        let n = random_array(IxDyn(&shape), 55);
        let masks = [
            random_array(IxDyn(&vec![3; sides]), 56),
            random_array(IxDyn(&vec![3; sides]), 57),
            random_array(IxDyn(&vec![5; sides]), 58),
        ];
        for round in 0..2 {
            for v in Variant::all_of_dim(sides) {
                for m in masks.iter().chain(masks.iter().rev()) {
                    let m = rank1_if_needed(v, m.view());
                    let got = gpu.conv(n.view(), m.view(), v).unwrap();
                    assert_matches_reference(got.view(), n.view(), m.view(), &format!("round {round}, {v}"));
                }
            }
        }
    }
}

// ---------------------------------------------------------------- large inputs

/// Compares a fast kernel's whole output on a large input with another variant (itself
/// proptested against the reference: the two may differ by both tolerances), and
/// spot-checks it against the f64 reference at corners, tile seams and random points.
fn fast_vs_other_and_spot_checks<D: Dimension>(
    shape: D,
    fast: Variant,
    other: Variant,
    radii: std::ops::RangeInclusive<usize>,
    seed: u64,
) {
    let gpu = gpu();
    let dim = shape.ndim();
    let n = random_array(shape.clone(), seed);
    for r in radii {
        let m = random_array(IxDyn(&vec![2 * r + 1; dim]), seed + 100 + r as u64)
            .into_dimensionality::<D>()
            .unwrap();
        let taps = m.len();
        let got = gpu.conv(n.view(), m.view(), fast).unwrap();
        let them = gpu.conv(n.view(), m.view(), other).unwrap();
        let abs = gpu
            .conv(n.mapv(f32::abs).view(), m.mapv(f32::abs).view(), other)
            .unwrap();
        let mut bad = Vec::new();
        for ((at, &a), (&b, &s)) in got.view().into_dyn().indexed_iter().zip(them.iter().zip(abs.iter())) {
            // 2x: both kernels err; the abs sum from the GPU is itself within 1%.
            let tol = 2.0 * reference::tolerance(s as f64 * 1.01, taps);
            let within = (a as f64 - b as f64).abs() <= tol; // false for NaN
            if !within && bad.len() < 8 {
                bad.push(format!("{:?}: {fast} {a:e}, {other} {b:e}, tol {tol:e}", at.slice()));
            }
        }
        assert!(
            bad.is_empty(),
            "{:?} r={r}: {fast} vs {other}:\n{}",
            n.shape(),
            bad.join("\n")
        );
        let dims = n.shape().to_vec();
        let mut points: Vec<Vec<usize>> = vec![vec![0; dim], dims.iter().map(|d| d - 1).collect()];
        points.extend((0..300u64).map(|i| {
            let z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
            dims.iter()
                .enumerate()
                .map(|(a, &d)| ((z >> (7 + 13 * a)) as usize) % d)
                .collect()
        }));
        for at in points {
            let (want, s) = reference::correlate_at(n.view(), m.view(), Mode::Zero, &at);
            let tol = reference::tolerance(s, taps);
            let g = got.view().into_dyn()[at.as_slice()];
            assert!(
                (g as f64 - want).abs() <= tol,
                "{:?} r={r} {at:?}: {fast} {g}, f64 {want}, tol {tol:e}",
                n.shape()
            );
        }
    }
}

/// Images with thousands of tiles: more than the blocks resident on an H200, so
/// conv2d_fast's persistent blocks loop over several tiles, for every compiled radius,
/// widths with and without 16-byte rows.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn large_images_fast_vs_tiled_cached_and_spot_checks() {
    for (shape, seed) in [(ndarray::Ix2(8000, 1030), 61u64), (ndarray::Ix2(3000, 2048), 62)] {
        fast_vs_other_and_spot_checks(shape, Variant::Conv2dFast, Variant::Conv2dTiledCached, 0..=8, seed);
    }
}

/// Volumes with several 64-plane chunks, many columns, and widths with and without
/// 16-byte rows, for every compiled radius of conv3d_fast.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn large_volumes_fast_vs_const_and_spot_checks() {
    for (shape, seed) in [(ndarray::Ix3(200, 90, 260), 63u64), (ndarray::Ix3(131, 70, 257), 64)] {
        fast_vs_other_and_spot_checks(shape, Variant::Conv3dFast, Variant::Conv3dConst, 0..=3, seed);
    }
}

/// A long signal (thousands of 1024-output tiles) on every 1D variant, against the
/// reference, for a radius inside and one outside the fast range.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn long_signal_every_1d_variant() {
    let gpu = gpu();
    let n = random_array(3_000_001, 71);
    for r in [5usize, 40] {
        let m = random_array(2 * r + 1, 72 + r as u64);
        let (want, abs) = reference::correlate_with_abs(n.view(), m.view(), Mode::Zero);
        for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
            if v.resolve(1, r).is_err() {
                continue;
            }
            let got = gpu.conv(n.view(), m.view(), v).unwrap();
            if let Err(e) = check_close(got.view(), want.view(), abs.view(), m.len()) {
                panic!("{v} r={r} len {}: {e}", n.len());
            }
        }
    }
}

// ---------------------------------------------------------------- modes and batches

/// SciPy's rules on axes shorter than the radius: reflect, mirror and wrap of a 1-, 2- or
/// 3-element axis repeat with their period however far the mask reaches, and a
/// one-element axis always reads its element. Every mode, every dimension, every variant
/// that implements the modes, and `Auto`; also convolve (the mask flipped).
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn every_mode_on_axes_shorter_than_the_radius() {
    let gpu = gpu();
    let shapes: [&[&[usize]]; 3] = [
        &[&[1], &[2], &[3], &[5]],
        &[&[1, 2], &[2, 3], &[3, 1], &[2, 7]],
        &[&[1, 2, 3], &[2, 1, 2], &[3, 3, 1]],
    ];
    for (dim, list) in shapes.iter().enumerate().map(|(i, l)| (i + 1, l)) {
        for (i, shape) in list.iter().enumerate() {
            let n = random_array(IxDyn(shape), 80 + i as u64);
            let general = random_array(IxDyn(&vec![7; dim]), 90 + i as u64); // radius 3 on every axis
            for mode in Mode::ALL.into_iter().chain([Mode::Constant(1.5)]) {
                for v in Variant::all_of_dim(dim)
                    .filter(|v| v.all_modes())
                    .chain([Variant::Auto])
                {
                    let m = rank1_if_needed(v, general.view());
                    let mut flipped = m.clone();
                    for axis in 0..dim {
                        flipped.invert_axis(ndarray::Axis(axis));
                    }
                    let opts = Options { variant: v, mode };
                    let got = gpu
                        .correlate(n.view(), m.view(), opts)
                        .unwrap_or_else(|e| panic!("{v} {mode:?}: {e}"));
                    if let Err(e) = check_against_reference(got.view(), n.view(), m.view(), mode) {
                        panic!("{v} {mode:?} on {shape:?}: {e}");
                    }
                    let got = gpu.convolve(n.view(), m.view(), opts).unwrap();
                    if let Err(e) = check_against_reference(got.view(), n.view(), flipped.view(), mode) {
                        panic!("convolve, {v} {mode:?} on {shape:?}: {e}");
                    }
                }
            }
        }
    }
}

/// `correlate_device` of `n` uploaded, into a fresh device array: the variant that ran
/// and the output, downloaded.
fn correlate_on_device(gpu: &Gpu, n: ArrayViewD<f32>, m: ArrayViewD<f32>, mode: Mode) -> (Variant, ArrayD<f32>) {
    let dn = gpu.upload(n).unwrap();
    let mut dp = gpu.alloc(dn.raw_dim()).unwrap();
    let ran = gpu.correlate_device(&dn, m, Options::mode(mode), &mut dp).unwrap();
    (ran, dp.to_host().unwrap())
}

/// `conv2d_separable` past r = 16 walks balanced shares of every strip's steps
/// (`layout`'s `segment`), at most one block per slot of the GPU: on an image longer than
/// the proptests' arrays (two of r = 16's 2048-row chunks and 70 rows, four strips and a
/// bit), at r = 17 and 32, under zero ghost cells (every step by tensor copies), reflect
/// (only the parts away from every edge by them) and a constant. Checked against the
/// reference over the rows around the image's first, 2048th and last rows, each range's
/// reference from the input rows it reads (rows `r` beyond it, or the image's edge), so
/// that those modes' ghost cells are the image's own (wrap's, from the far edge, are not:
/// the proptests and `tensor_copied_tiles_every_mode` have it);
/// `capped_persistent_grids_match_the_reference` checks whole images of many shares.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn conv2d_separable_long_images_past_r16() {
    use layout::families::conv2d_separable::{chunk, TILE_W};
    let gpu = gpu();
    let c = chunk(17) as usize;
    assert_eq!(c, chunk(32) as usize, "one chunk length past r = 16");
    let (h, w) = (2 * c + 70, 4 * TILE_W as usize + 4);
    let n = random_array(IxDyn(&[h, w]), 190);
    for r in [17usize, 32] {
        let axes = [191, 192].map(|seed| gpuconv_tests::random_vec(2 * r + 1, seed + r as u64));
        let m = gpuconv_tests::outer(&axes);
        for mode in [Mode::Zero, Mode::Reflect, Mode::Constant(2.5)] {
            let variant = Variant::Conv2dSeparable;
            let got = gpu.correlate(n.view(), m.view(), Options { variant, mode }).unwrap();
            for (a, b) in [(0, 64), (c - 64, c + 64), (2 * c - 64, h)] {
                let (lo, hi) = (a.saturating_sub(r), (b + r).min(h));
                let rows = n.slice(s![lo..hi, ..]).into_dyn();
                let (want, abs) = reference::correlate_with_abs(rows, m.view(), mode);
                let keep = s![a - lo..b - lo, ..];
                let at = check_close(got.slice(s![a..b, ..]), want.slice(keep), abs.slice(keep), m.len());
                if let Err(e) = at {
                    panic!("conv2d_separable r = {r}, {mode:?}, rows {a}..{b}: {e}");
                }
            }
        }
    }
}

/// `conv2d_fast` from r = 3 stages the tiles of f32 rows a multiple of 4 floats with
/// tensor copies (TMA, whose out-of-bounds cells read 0); under every other mode its
/// border tiles are staged by copies beside them. Every mode (constant fills 0, -0 and
/// 2.5), one image and a batch (a 3D tensor map), rows a tile and a half wide, arrays
/// smaller than the mask, against the reference; `conv2d_separable`'s steps from r = 8
/// and the 3D walks' planes too.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn tensor_copied_tiles_every_mode() {
    let gpu = gpu();
    let modes = Mode::ALL.into_iter().chain([Mode::Constant(-0.0), Mode::Constant(2.5)]);
    // Every mode through `variant`, against the reference.
    let every_mode = |n: &ArrayD<f32>, m: &ArrayD<f32>, variant: Variant, what: String| {
        for mode in modes.clone() {
            let got = gpu.correlate(n.view(), m.view(), Options { variant, mode }).unwrap();
            if let Err(e) = check_against_reference(got.view(), n.view(), m.view(), mode) {
                panic!("{what}, {mode:?}: {e}");
            }
        }
    };
    // Boxes wider and taller than the tensor too (the mask wider than the array).
    let shapes: [&[usize]; 5] = [&[300, 196], &[3, 70, 260], &[41, 1028], &[1, 4], &[5, 8]];
    for (i, r) in [3usize, 4].into_iter().enumerate() {
        for (j, &shape) in shapes.iter().enumerate() {
            let n = random_array(IxDyn(shape), 130 + 10 * i as u64 + j as u64);
            let mut mask = vec![1; shape.len()];
            let k = mask.len();
            mask[k - 2..].fill(2 * r + 1);
            let m = random_array(IxDyn(&mask), 150 + i as u64);
            every_mode(&n, &m, Variant::Conv2dFast, format!("conv2d_fast r = {r}, {shape:?}"));
        }
    }
    // conv2d_separable from r = 8: its steps by tensor copies, under every mode its
    // blocks wholly inside (a strip and a chunk of 256 rows away from every edge).
    let n = random_array(IxDyn(&[900, 516]), 170);
    for r in [8usize, 16] {
        let axes = [171, 172].map(|seed| gpuconv_tests::random_vec(2 * r + 1, seed));
        let m = gpuconv_tests::outer(&axes);
        every_mode(&n, &m, Variant::Conv2dSeparable, format!("conv2d_separable r = {r}"));
    }
    // The 3D walks copy each plane by a tensor copy where their radius takes them
    // (`conv3d_fast` r = 1, `conv3d_separable` from r = 2; the others stage by threads), in
    // every mode: the threads then write the ghost cells, and windows on no x side copy
    // as many of their own cells onto themselves (300 columns: a column of tiles on
    // each side and one inside, as the rows); volumes smaller than the mask and than one
    // box too.
    // Widths off a multiple of 4 and of the tile (131), and tiles on every x and y side
    // with some inside on both axes (516 x 140, also at r = 4: tiles 64 rows tall) too.
    let volumes: [&[usize]; 5] = [&[37, 70, 300], &[5, 9, 8], &[2, 3, 4], &[6, 21, 131], &[9, 140, 516]];
    for (j, &shape) in volumes.iter().enumerate() {
        let n = random_array(IxDyn(shape), 180 + j as u64);
        for r in 1..=4usize {
            let axes = [181, 182, 183].map(|seed| gpuconv_tests::random_vec(2 * r + 1, seed + r as u64));
            let m = gpuconv_tests::outer(&axes);
            every_mode(
                &n,
                &m,
                Variant::Conv3dSeparable,
                format!("conv3d_separable r = {r}, {shape:?}"),
            );
            if r <= 3 {
                let m = random_array(IxDyn(&[2 * r + 1; 3]), 190 + r as u64);
                every_mode(&n, &m, Variant::Conv3dFast, format!("conv3d_fast r = {r}, {shape:?}"));
            }
        }
    }
}

/// The fast families run with their taps baked into the code from a mask's second launch
/// (`Gpu::set_baked_taps`, on by default): every such launch gives the same bits as the
/// same entry reading its taps from the `__constant__` symbol, in every mode, full and
/// rank-1 masks, f32 and u8 images; and it did run in a baked module.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn baked_taps_match_the_symbol_bit_for_bit() {
    let gpu = gpu();
    let same = |a: ArrayViewD<f32>, b: ArrayViewD<f32>| a.iter().zip(b.iter()).all(|(x, y)| x.to_bits() == y.to_bits());
    let both = |run: &dyn Fn() -> ArrayD<f32>, what: String| {
        gpu.set_baked_taps(false);
        let read = run();
        gpu.set_baked_taps(true);
        // The first launch with a mask reads the symbol, the second bakes it.
        let first = run();
        let before = gpu.baked_launches();
        let baked = run();
        assert_eq!(gpu.baked_launches(), before + 1, "{what}: did not run baked");
        assert!(same(read.view(), first.view()), "{what}: the symbol's result changed");
        assert!(same(read.view(), baked.view()), "{what}: baked taps changed the result");
    };
    let arrays: [(Variant, &[usize], &[usize]); 6] = [
        (Variant::Conv1dFast, &[5003], &[1, 2, 16]),
        (Variant::Conv2dFast, &[133, 301], &[0, 1, 3, 4]),
        (Variant::Conv3dFast, &[9, 37, 150], &[1, 2, 3]),
        (Variant::Conv2dSeparable, &[133, 301], &[2, 8, 32]),
        (Variant::Conv3dSeparable, &[9, 37, 150], &[1, 3, 4]),
        (Variant::Conv2dFast, &[3, 40, 70], &[2]),
    ];
    for (k, (variant, shape, radii)) in arrays.into_iter().enumerate() {
        let n = random_array(IxDyn(shape), 300 + k as u64);
        for &r in radii {
            let m = if matches!(variant, Variant::Conv2dSeparable | Variant::Conv3dSeparable) {
                let axes: Vec<Vec<f32>> = (0..shape.len())
                    .map(|a| gpuconv_tests::random_vec(2 * r + 1, 310 + a as u64))
                    .collect();
                gpuconv_tests::outer(&axes)
            } else {
                let mut dims = vec![2 * r + 1; shape.len()];
                if k == 5 {
                    dims[0] = 1; // a batch of images
                }
                random_array(IxDyn(&dims), 320 + r as u64)
            };
            for mode in Mode::ALL {
                let run = || gpu.correlate(n.view(), m.view(), Options { variant, mode }).unwrap();
                both(&run, format!("{variant} r = {r} {shape:?} {mode:?}"));
            }
        }
    }
    for (variant, r) in [
        (Variant::ImagePatches, 1usize),
        (Variant::ImagePatches, 4),
        (Variant::ImageFast, 2),
    ] {
        let m = random_array(IxDyn(&[2 * r + 1, 2 * r + 1]), 330 + r as u64);
        let m = m.into_dimensionality::<ndarray::Ix2>().unwrap();
        for mode in [Mode::Zero, Mode::Reflect] {
            let img = random_image::<f32>((70, 150, 3), 340);
            let run = || {
                gpu.correlate_image(img.view(), m.view(), Options { variant, mode })
                    .unwrap()
                    .into_dyn()
            };
            both(&run, format!("{variant} f32 r = {r} {mode:?}"));
            if variant.takes_pixels(PixelKind::U8) {
                let img = random_image::<u8>((70, 150, 3), 341);
                let run = || {
                    gpu.correlate_image(img.view(), m.view(), Options { variant, mode })
                        .unwrap()
                        .mapv(f32::from)
                        .into_dyn()
                };
                both(&run, format!("{variant} u8 r = {r} {mode:?}"));
            }
        }
    }
}

/// More masks than the baked modules kept (`Gpu::MAX_BAKED`): the modules are dropped and built again,
/// each launch still right (its own tensor map, shared memory opted in again), on
/// `conv2d_fast` r = 3 (tensor-copied tiles) and `conv3d_fast` r = 1 (tensor-copied
/// planes, chunks of depth sized by occupancy) in turn.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn baked_modules_are_dropped_and_built_again() {
    let gpu = gpu();
    let images = random_array(IxDyn(&[70, 260]), 350);
    let volume = random_array(IxDyn(&[20, 37, 132]), 351);
    let start = gpu.baked_launches();
    let masks = Gpu::MAX_BAKED as u64 + 8;
    for i in 0..masks {
        let (n, r, variant) = if i % 2 == 0 {
            (&images, 3, Variant::Conv2dFast)
        } else {
            (&volume, 1, Variant::Conv3dFast)
        };
        let m = random_array(IxDyn(&vec![2 * r + 1; n.ndim()]), 360 + i);
        let opts = Options {
            variant,
            mode: Mode::Reflect,
        };
        let first = gpu.correlate(n.view(), m.view(), opts).unwrap();
        let baked = gpu.correlate(n.view(), m.view(), opts).unwrap();
        assert!(gpu.baked_modules() <= Gpu::MAX_BAKED, "more modules kept than the cap");
        assert!(
            first.iter().zip(baked.iter()).all(|(a, b)| a.to_bits() == b.to_bits()),
            "mask {i}: baked taps changed the result"
        );
        if let Err(e) = check_against_reference(baked.view(), n.view(), m.view(), opts.mode) {
            panic!("mask {i}, {variant}: {e}");
        }
    }
    assert_eq!(gpu.baked_launches(), start + masks, "every second launch ran baked");
}

/// A stack of images under a mask one element deep along the stack runs as a batch of
/// 2D filters (conv2d_fast on every plane, one launch), and a stack of signals under a
/// mask one row tall as a batch of 1D filters: each slice filtered on its own, in every
/// mode, rectangular masks included.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn batches_filter_every_slice_on_its_own() {
    let gpu = gpu();
    let cases: [(&[usize], &[usize], Variant); 4] = [
        (&[7, 45, 131], &[1, 5, 5], Variant::Conv2dFast),
        (&[3, 200, 260], &[1, 3, 9], Variant::Conv2dFast),
        (&[9, 3001], &[1, 7], Variant::Conv1dFast),
        (&[40, 1025], &[1, 33], Variant::Conv1dFast),
    ];
    for (i, (shape, mask, expected)) in cases.into_iter().enumerate() {
        let n = random_array(IxDyn(shape), 110 + i as u64);
        let m = random_array(IxDyn(mask), 120 + i as u64);
        for mode in Mode::ALL {
            let (ran, got) = correlate_on_device(&gpu, n.view(), m.view(), mode);
            assert_eq!(ran, expected, "{shape:?} under {mask:?}");
            if let Err(e) = check_against_reference(got.view(), n.view(), m.view(), mode) {
                panic!("batch {shape:?} under {mask:?}, {mode:?}: {e}");
            }
        }
    }
}

/// Past every kernel that implements a mode (2D general masks past radius 8, rank-1
/// past 32, 3D past 3, 1D past 16, batches past their kernels' radii), `Auto` pads the
/// input on the host by the mode and runs a zero-mode kernel: every mode,
/// masks wider than the array, rectangular masks, convolve, device arrays, and 3-channel
/// images (u8 and f32, host and device, through their channel planes). `resolve_call`
/// says which runs.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn auto_pads_on_the_host_past_the_fast_kernels() {
    let gpu = gpu();
    // (input shape, mask shape, rank 1, what runs on the padded array)
    let cases: [(&[usize], &[usize], bool, Variant); 12] = [
        (&[1], &[35], false, Variant::Conv1dTiled),
        (&[40], &[61], false, Variant::Conv1dTiled),
        (&[1100], &[601], false, Variant::Conv1dTiled),
        (&[1, 1], &[19, 19], false, Variant::Conv2dTiledIn),
        (&[7, 3], &[25, 25], false, Variant::Conv2dTiledIn),
        (&[40, 70], &[41, 41], false, Variant::Conv2dConst),
        (&[33, 50], &[5, 35], false, Variant::Conv2dConst),
        (&[9, 300], &[3, 41], false, Variant::Conv2dConst),
        (&[30, 45], &[67, 67], true, Variant::Conv2dBasic),
        (&[1, 2, 3], &[9, 9, 9], false, Variant::Conv3dConst),
        (&[9, 17, 30], &[11, 9, 11], false, Variant::Conv3dConst),
        (&[6, 20, 40], &[1, 5, 19], false, Variant::Conv3dConst),
    ];
    for (i, (shape, mask, rank1, expected)) in cases.into_iter().enumerate() {
        let n = random_array(IxDyn(shape), 300 + i as u64);
        let m = if rank1 {
            let axes: Vec<Vec<f32>> = (mask.iter().enumerate())
                .map(|(a, &k)| gpuconv_tests::random_vec(k, 310 + 3 * i as u64 + a as u64))
                .collect();
            gpuconv_tests::outer(&axes)
        } else {
            random_array(IxDyn(mask), 310 + i as u64)
        };
        let radius = gpuconv::conv::mask_radius(mask).unwrap();
        let mut flipped = m.clone();
        for axis in 0..shape.len() {
            flipped.invert_axis(ndarray::Axis(axis));
        }
        for mode in Mode::ALL.into_iter().chain([Mode::Constant(1.5)]) {
            let run = Variant::Auto.resolve_call(shape.len(), radius, rank1, mode).unwrap();
            assert_eq!(run.variant, expected, "{shape:?} under {mask:?}, {mode:?}");
            assert_eq!(run.padded, mode != Mode::Zero, "{shape:?} under {mask:?}, {mode:?}");
            let got = gpu
                .correlate(n.view(), m.view(), Options::mode(mode))
                .unwrap_or_else(|e| panic!("{shape:?} under {mask:?}, {mode:?}: {e}"));
            if let Err(e) = check_against_reference(got.view(), n.view(), m.view(), mode) {
                panic!("{shape:?} under {mask:?}, {mode:?}: {e}");
            }
            let got = gpu.convolve(n.view(), m.view(), Options::mode(mode)).unwrap();
            if let Err(e) = check_against_reference(got.view(), n.view(), flipped.view(), mode) {
                panic!("convolve, {shape:?} under {mask:?}, {mode:?}: {e}");
            }
            // Device arrays take the same way, through the host.
            let (ran, got) = correlate_on_device(&gpu, n.view(), m.view(), mode);
            assert_eq!(ran, expected, "{shape:?} under {mask:?}, {mode:?}");
            if let Err(e) = check_against_reference(got.view(), n.view(), m.view(), mode) {
                panic!("device, {shape:?} under {mask:?}, {mode:?}: {e}");
            }
        }
    }
    // Images past image_fast's radii and conv2d_fast's: each channel plane padded.
    for (i, (h, w, ky, kx)) in [(20usize, 33usize, 19usize, 19usize), (5, 70, 3, 23), (1, 1, 21, 21)]
        .into_iter()
        .enumerate()
    {
        let m = random_array((ky, kx), 330 + i as u64);
        for mode in [Mode::Reflect, Mode::Wrap, Mode::Constant(7.0)] {
            let img = gpuconv_tests::random_image::<u8>((h, w, 3), 340 + i as u64);
            let got = gpu.correlate_image(img.view(), m.view(), Options::mode(mode)).unwrap();
            if let Err(e) = gpuconv_tests::check_image_against_reference(got.view(), img.view(), m.view(), mode) {
                panic!("u8 image {h}x{w} under {ky}x{kx}, {mode:?}: {e}");
            }
            let img = gpuconv_tests::random_image::<f32>((h, w, 3), 350 + i as u64);
            let got = gpu.correlate_image(img.view(), m.view(), Options::mode(mode)).unwrap();
            if let Err(e) = gpuconv_tests::check_image_against_reference(got.view(), img.view(), m.view(), mode) {
                panic!("f32 image {h}x{w} under {ky}x{kx}, {mode:?}: {e}");
            }
            // Device images, at an odd pitch: through the host, channel planes.
            let pitch = (w * 3 + 5) * 4;
            let dn = gpu.upload_image_pitched(img.view(), pitch).unwrap();
            let mut dp = gpu.alloc_image_pitched(h, w, 3, pitch).unwrap();
            let ran = gpu
                .correlate_image_device(&dn, m.view(), Options::mode(mode), &mut dp)
                .unwrap();
            assert!(!ran.is_image(), "{ran}: no image kernel takes {ky}x{kx} under {mode:?}");
            let got = dp.to_host().unwrap();
            if let Err(e) = gpuconv_tests::check_image_against_reference(got.view(), img.view(), m.view(), mode) {
                panic!("f32 device image {h}x{w} under {ky}x{kx}, {mode:?}: {e}");
            }
        }
    }
}

// ---------------------------------------------------------------- separable masks

/// Rank-1 masks run separable, one pass: given as two 1D masks (`correlate_separable`),
/// or detected in a 2D mask built as their product, which `Auto` then runs on
/// `conv2d_separable`; rectangular ones and every mode too. A mask that is not of rank 1
/// is refused by the separable variant and runs elsewhere under `Auto`.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn rank1_masks_run_separable_given_or_detected() {
    let gpu = gpu();
    let n = random_array((300, 257), 130);
    for (i, (ky, kx)) in [(5usize, 5usize), (3, 9), (17, 17), (65, 65), (33, 1)]
        .into_iter()
        .enumerate()
    {
        let col = random_array(ky, 140 + i as u64);
        let row = random_array(kx, 150 + i as u64);
        let full = ndarray::Array2::from_shape_fn((ky, kx), |(y, x)| col[y] * row[x]);
        for mode in Mode::ALL {
            let given = gpu
                .correlate_separable(n.view(), col.view(), row.view(), Options::mode(mode))
                .unwrap();
            let detected = gpu.correlate(n.view(), full.view(), Options::mode(mode)).unwrap();
            for (what, got) in [("given", &given), ("detected", &detected)] {
                if let Err(e) = check_against_reference(got.view(), n.view(), full.view(), mode) {
                    panic!("{ky}x{kx} {what} {mode:?}: {e}");
                }
            }
        }
        let dn = gpu.upload(n.view()).unwrap();
        let mut dp = gpu.alloc(dn.raw_dim()).unwrap();
        let ran = gpu.conv_device(&dn, full.view(), Variant::Auto, &mut dp).unwrap();
        // A mask one row tall runs conv1d_fast on every row; a rank-1 mask from radius 2
        // the separable kernel; smaller ones conv2d_fast.
        let expected = match (ky, kx) {
            (1, _) => Variant::Conv1dFast,
            _ if ky.max(kx) / 2 >= 2 => Variant::Conv2dSeparable,
            _ => Variant::Conv2dFast,
        };
        assert_eq!(ran, expected, "{ky}x{kx}");
    }
    let not_rank1 = random_array((5, 5), 160);
    assert!(matches!(
        gpu.conv(n.view(), not_rank1.view(), Variant::Conv2dSeparable),
        Err(gpuconv::Error::NotSeparable { .. })
    ));
    let dn = gpu.upload(n.view()).unwrap();
    let mut dp = gpu.alloc(dn.raw_dim()).unwrap();
    assert_eq!(
        gpu.conv_device(&dn, not_rank1.view(), Variant::Auto, &mut dp).unwrap(),
        Variant::Conv2dFast
    );
}

/// Rank-1 3D masks run separable, one pass: given as three 1D masks
/// (`correlate_separable_3d`), or detected in a 3D mask built as their product, which
/// `Auto` then runs on `conv3d_separable` (within its radii); rectangular ones and every
/// mode too.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn rank1_3d_masks_run_separable_given_or_detected() {
    let gpu = gpu();
    let n = random_array((37, 45, 133), 170);
    for (i, (kz, ky, kx)) in [(3usize, 3usize, 3usize), (5, 3, 7), (9, 9, 9), (1, 5, 5), (11, 3, 3)]
        .into_iter()
        .enumerate()
    {
        let axes: Vec<Vec<f32>> = [kz, ky, kx]
            .iter()
            .enumerate()
            .map(|(a, &k)| gpuconv_tests::random_vec(k, 180 + 3 * i as u64 + a as u64))
            .collect();
        let full = gpuconv_tests::outer(&axes)
            .into_dimensionality::<ndarray::Ix3>()
            .unwrap();
        let view = |a: usize| ndarray::ArrayView1::from(&axes[a][..]);
        // Past the separable kernel's radii a 3D mask runs on the textbook kernels: zero
        // ghost cells only.
        let modes: &[Mode] = if kz.max(ky).max(kx) / 2 <= 4 {
            &Mode::ALL
        } else {
            &[Mode::Zero]
        };
        for &mode in modes {
            let given = gpu
                .correlate_separable_3d(n.view(), view(0), view(1), view(2), Options::mode(mode))
                .unwrap();
            let detected = gpu.correlate(n.view(), full.view(), Options::mode(mode)).unwrap();
            for (what, got) in [("given", &given), ("detected", &detected)] {
                if let Err(e) = check_against_reference(got.view(), n.view(), full.view(), mode) {
                    panic!("{kz}x{ky}x{kx} {what} {mode:?}: {e}");
                }
            }
        }
        let dn = gpu.upload(n.view()).unwrap();
        let mut dp = gpu.alloc(dn.raw_dim()).unwrap();
        let ran = gpu.conv_device(&dn, full.view(), Variant::Auto, &mut dp).unwrap();
        // A mask one plane deep runs conv2d_fast on every plane; a rank-1 mask within the
        // separable kernel's radii runs it; a longer one (radius 5 along z) the general
        // kernels.
        let expected = match (kz, ky, kx) {
            (1, _, _) => Variant::Conv2dFast,
            _ if kz.max(ky).max(kx) / 2 <= 4 => Variant::Conv3dSeparable,
            _ => Variant::Conv3dConst,
        };
        assert_eq!(ran, expected, "{kz}x{ky}x{kx}");
    }
    let not_rank1 = random_array((3, 3, 3), 190);
    assert!(matches!(
        gpu.conv(n.view(), not_rank1.view(), Variant::Conv3dSeparable),
        Err(gpuconv::Error::NotSeparable { .. })
    ));
}

/// Infinities and NaN in the input: the separable kernel, whose two passes multiply in
/// another order than the reference's one sum, and `conv2d_fast` give NaN, +inf and -inf where the f64
/// reference does, and agrees elsewhere (a faster pass must keep this: the twenty-seventh
/// session's tensor-core row pass, whose Toeplitz band meets inputs with zero taps, had to
/// fall back to FFMAs on them).
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn separable_and_fast_2d_keep_the_references_inf_and_nan() {
    let gpu = gpu();
    let cases = [
        (Variant::Conv2dSeparable, 2usize),
        (Variant::Conv2dSeparable, 8),
        (Variant::Conv2dSeparable, 16),
        (Variant::Conv2dSeparable, 32),
        (Variant::Conv2dFast, 1),
        (Variant::Conv2dFast, 3),
        (Variant::Conv2dFast, 8),
    ];
    for (i, (variant, r)) in cases.into_iter().enumerate() {
        let mut n = random_array((150, 300), 200 + i as u64);
        n[[40, 100]] = f32::INFINITY;
        n[[41, 200]] = f32::NEG_INFINITY;
        n[[120, 37]] = f32::NAN;
        // Positive taps: an inf keeps its sign through the sums.
        let col = random_array(2 * r + 1, 210 + i as u64).mapv(|v| v.abs() + 0.25);
        let row = random_array(2 * r + 1, 220 + i as u64).mapv(|v| v.abs() + 0.25);
        let full = ndarray::Array2::from_shape_fn((2 * r + 1, 2 * r + 1), |(y, x)| col[y] * row[x]);
        let got = gpu
            .correlate(
                n.view(),
                full.view(),
                Options {
                    variant,
                    mode: Mode::Zero,
                },
            )
            .unwrap();
        let want = reference::correlate(n.view(), full.view(), Mode::Zero);
        let (mut nan, mut inf) = (0, 0);
        for (g, w) in got.iter().zip(&want) {
            // Precision is the proptests' business; here, where each output is not finite.
            let agrees = if w.is_nan() {
                nan += 1;
                g.is_nan()
            } else if w.is_infinite() {
                inf += 1;
                g == w
            } else {
                (g - w).abs() <= 1e-3 * (1.0 + w.abs())
            };
            assert!(agrees, "{variant} r = {r}: got {g}, reference {w}");
        }
        assert!(
            nan > 0 && inf > 0,
            "{variant} r = {r}: the case must reach both ({nan} NaN, {inf} inf)"
        );
    }
}

/// Persistent grids capped at a few blocks (`Gpu::limit_persistent_grid`): each block then
/// walks many tiles round its ring, and where tiles are handed out by the launch's counter
/// (`layout::families::conv2d_fast::counted`) one block may take all of them. The results
/// match the reference in zero, reflect and wrap, and the 1D and 2D families' are the
/// same bits as the uncapped grid's (each output's FMAs do not depend on its block).
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn capped_persistent_grids_match_the_reference() {
    let gpu = gpu();
    let caps = [Some(1), Some(3), None];
    // Each mode under each cap, the uncapped launch last (its bits are the ones compared).
    let each_cap = |what: &str, run: &dyn Fn(Mode) -> Result<Vec<u32>, String>, same_bits: bool| {
        for mode in [Mode::Zero, Mode::Reflect, Mode::Wrap] {
            let mut bits = Vec::new();
            for cap in caps {
                gpu.limit_persistent_grid(cap);
                let got = run(mode);
                gpu.limit_persistent_grid(None);
                bits.push(got.unwrap_or_else(|e| panic!("{what}, {mode:?}, cap {cap:?}: {e}")));
            }
            if same_bits {
                for (cap, b) in caps.iter().zip(&bits) {
                    assert!(b == &bits[2], "{what}, {mode:?}: cap {cap:?} changed bits");
                }
            }
        }
    };
    fn plain(gpu: &Gpu, variant: Variant, n: &ArrayD<f32>, m: &ArrayD<f32>, mode: Mode) -> Result<Vec<u32>, String> {
        let got = gpu
            .correlate(n.view(), m.view(), Options { variant, mode })
            .map_err(|e| e.to_string())?;
        check_against_reference(got.view(), n.view(), m.view(), mode)?;
        Ok(got.iter().map(|v| v.to_bits()).collect())
    }
    // conv1d_fast from r = 8; conv2d_fast from r = 3 (12 tiles of 128 x 32 or more).
    let n1 = random_array(IxDyn(&[20_011]), 300);
    let n2 = random_array(IxDyn(&[101, 389]), 301);
    for r in [8usize, 16] {
        let m = random_array(IxDyn(&[2 * r + 1]), 302 + r as u64);
        each_cap(
            &format!("conv1d_fast r = {r}"),
            &|mode| plain(&gpu, Variant::Conv1dFast, &n1, &m, mode),
            true,
        );
    }
    for r in [3usize, 4] {
        let m = random_array(IxDyn(&[2 * r + 1, 2 * r + 1]), 310 + r as u64);
        each_cap(
            &format!("conv2d_fast r = {r}"),
            &|mode| plain(&gpu, Variant::Conv2dFast, &n2, &m, mode),
            true,
        );
    }
    // conv2d_separable past r = 16, whose blocks walk balanced shares of every strip's
    // steps (a block under a cap of 1 or 3 walks several strips' parts): rows a multiple
    // of 4 floats (steps by tensor copies) and not.
    for (r, w) in [(17usize, 388), (17, 389), (32, 388), (32, 389)] {
        let n = random_array(IxDyn(&[150, w]), 315 + w as u64);
        let axes = [316, 317].map(|seed| gpuconv_tests::random_vec(2 * r + 1, seed + r as u64));
        let m = gpuconv_tests::outer(&axes);
        each_cap(
            &format!("conv2d_separable r = {r}, width {w}"),
            &|mode| plain(&gpu, Variant::Conv2dSeparable, &n, &m, mode),
            true,
        );
    }
    // The 3D walks whose grids are balanced persistent blocks.
    let n3 = random_array(IxDyn(&[19, 40, 140]), 320);
    for r in 1..=3usize {
        let m = random_array(IxDyn(&[2 * r + 1; 3]), 321 + r as u64);
        each_cap(
            &format!("conv3d_fast r = {r}"),
            &|mode| plain(&gpu, Variant::Conv3dFast, &n3, &m, mode),
            false,
        );
        let axes = [331, 332, 333].map(|seed| gpuconv_tests::random_vec(2 * r + 1, seed + r as u64));
        let m = gpuconv_tests::outer(&axes);
        each_cap(
            &format!("conv3d_separable r = {r}"),
            &|mode| plain(&gpu, Variant::Conv3dSeparable, &n3, &m, mode),
            false,
        );
    }
    // image_patches: the u8 byte ring (r = 1) and the persistent radii, 1 and 3 channels.
    fn image<T: Pixel>(
        gpu: &Gpu,
        img: &ndarray::Array3<T>,
        m: &ndarray::Array2<f32>,
        mode: Mode,
    ) -> Result<Vec<u32>, String> {
        let opts = Options {
            variant: Variant::ImagePatches,
            mode,
        };
        let got = gpu
            .correlate_image(img.view(), m.view(), opts)
            .map_err(|e| e.to_string())?;
        check_image_against_reference(got.view(), img.view(), m.view(), mode)?;
        Ok(got.iter().map(|v| v.to_f32().to_bits()).collect())
    }
    for r in [1usize, 3, 4] {
        let m = random_array((2 * r + 1, 2 * r + 1), 340 + r as u64);
        for c in [1usize, 3] {
            let (h, w) = (300, 1100 / c);
            let what = format!("image_patches r = {r}, {c} channels");
            let img8 = random_image::<u8>((h, w, c), 350 + r as u64 + c as u64);
            each_cap(&format!("{what}, u8"), &|mode| image(&gpu, &img8, &m, mode), true);
            if r > 1 {
                let img32 = random_image::<f32>((h, w, c), 360 + r as u64 + c as u64);
                each_cap(&format!("{what}, f32"), &|mode| image(&gpu, &img32, &m, mode), true);
            }
        }
    }
}
