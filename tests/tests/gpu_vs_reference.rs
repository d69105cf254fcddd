//! Every variant against the CPU reference (`gpuconv::reference`), element-wise within
//! `reference::tolerance(Σ|terms|, taps)`, on random sizes and radii (proptest); plus
//! strided views, untouched inputs, `Auto` across the fast kernels' range, and reuse of
//! device output buffers.
use gpuconv::{reference, Variant};
use gpuconv_tests::{
    assert_close_1d, assert_close_2d, case_1d, case_2d, check_against_reference_1d, check_against_reference_2d, gpu,
    proptest_config, random_array1, random_array2, Case1d, Case2d,
};
use ndarray::{s, Array1, Array2};
use proptest::test_runner::{TestCaseError, TestRunner};

/// Cases per variant: 48 keeps the whole suite to well under two minutes on one GPU.
const CASES: u32 = 48;

fn prop_1d(v: Variant) {
    let gpu = gpu();
    let (max, _) = v.max_radius();
    let mut runner = TestRunner::new(proptest_config(CASES));
    let result = runner.run(&case_1d(max), |c: Case1d| {
        let (n, m) = (c.input(), c.mask());
        let got = gpu
            .conv1d(n.view(), m.view(), v)
            .map_err(|e| TestCaseError::fail(format!("{v} returned an error: {e}")))?;
        check_against_reference_1d(got.view(), n.view(), m.view()).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{}: {e}", v.name());
    }
}

fn prop_2d(v: Variant) {
    let gpu = gpu();
    let (max, _) = v.max_radius();
    let mut runner = TestRunner::new(proptest_config(CASES));
    let result = runner.run(&case_2d(max), |c: Case2d| {
        let (n, m) = (c.input(), c.mask());
        let got = gpu
            .conv2d(n.view(), m.view(), v)
            .map_err(|e| TestCaseError::fail(format!("{v} returned an error: {e}")))?;
        check_against_reference_2d(got.view(), n.view(), m.view()).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{}: {e}", v.name());
    }
}

/// One `#[test]` per variant, named as `Variant::name()`; `PROPTESTED` lists them so that
/// `every_variant_has_a_proptest` can prove none is missing.
macro_rules! variant_proptests {
    ($($name:ident => $check:ident($variant:expr)),* $(,)?) => {
        $(
            #[test]
            #[cfg_attr(
                not(gpu_present),
                ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
            )]
            fn $name() {
                $check($variant);
            }
        )*
        const PROPTESTED: &[(&str, Variant)] = &[$((stringify!($name), $variant)),*];
    };
}

variant_proptests! {
    conv1d_basic => prop_1d(Variant::Conv1dBasic),
    conv1d_const => prop_1d(Variant::Conv1dConst),
    conv1d_tiled => prop_1d(Variant::Conv1dTiled),
    conv1d_tiled_cached => prop_1d(Variant::Conv1dTiledCached),
    conv1d_fast => prop_1d(Variant::Conv1dFast),
    conv2d_basic => prop_2d(Variant::Conv2dBasic),
    conv2d_const => prop_2d(Variant::Conv2dConst),
    conv2d_tiled_in => prop_2d(Variant::Conv2dTiledIn),
    conv2d_tiled_cached => prop_2d(Variant::Conv2dTiledCached),
    conv2d_fast => prop_2d(Variant::Conv2dFast),
}

/// Runs without a GPU: the proptests above cover exactly Variant::ALL_1D and ALL_2D.
#[test]
fn every_variant_has_a_proptest() {
    let all: Vec<Variant> = Variant::ALL_1D.into_iter().chain(Variant::ALL_2D).collect();
    for v in &all {
        assert!(
            PROPTESTED.iter().any(|(_, p)| p == v),
            "variant {} has no proptest in gpu_vs_reference.rs",
            v.name()
        );
    }
    for (name, v) in PROPTESTED {
        assert_eq!(*name, v.name(), "proptest named after Variant::name()");
    }
    assert_eq!(PROPTESTED.len(), all.len());
}

// ---------------------------------------------------------------- Auto

/// Radii inside and outside the fast kernels' range, and past the `.const` symbols.
const AUTO_RADII_1D: &[usize] = &[0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 20, 100, 1000, 2047, 2048, 2500];
const AUTO_RADII_2D: &[usize] = &[0, 1, 2, 4, 5, 7, 8, 9, 12, 15, 16, 31, 32, 35];

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn auto_1d_matches_reference_inside_and_outside_fast_range() {
    let gpu = gpu();
    for (i, &r) in AUTO_RADII_1D.iter().enumerate() {
        for len in [1, 37, 1023, 1024, 3001] {
            let n = random_array1(len, 100 + i as u64);
            let m = random_array1(2 * r + 1, 200 + i as u64);
            let expected = match r {
                0..=16 => Variant::Conv1dFast,
                17..=2047 => Variant::Conv1dTiled,
                _ => Variant::Conv1dBasic,
            };
            assert_eq!(Variant::Auto.resolve(1, r).unwrap(), expected, "radius {r}");
            let dn = gpu.upload1(n.view()).unwrap();
            let mut dp = gpu.alloc1(len).unwrap();
            let ran = gpu.conv1d_device(&dn, m.view(), Variant::Auto, &mut dp).unwrap();
            assert_eq!(ran, expected, "conv1d_device reports what Auto ran (radius {r})");
            let got = dp.to_host().unwrap();
            if let Err(e) = check_against_reference_1d(got.view(), n.view(), m.view()) {
                panic!("Auto (ran {ran}) radius {r} len {len}: {e}");
            }
            let got = gpu.conv1d(n.view(), m.view(), Variant::Auto).unwrap();
            if let Err(e) = check_against_reference_1d(got.view(), n.view(), m.view()) {
                panic!("conv1d Auto radius {r} len {len}: {e}");
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn auto_2d_matches_reference_inside_and_outside_fast_range() {
    let gpu = gpu();
    for (i, &r) in AUTO_RADII_2D.iter().enumerate() {
        for dim in [(1, 1), (33, 130), (70, 257)] {
            let n = random_array2(dim, 300 + i as u64);
            let k = 2 * r + 1;
            let m = random_array2((k, k), 400 + i as u64);
            let expected = match r {
                0..=8 => Variant::Conv2dFast,
                9..=15 => Variant::Conv2dTiledIn,
                16..=31 => Variant::Conv2dConst,
                _ => Variant::Conv2dBasic,
            };
            assert_eq!(Variant::Auto.resolve(2, r).unwrap(), expected, "radius {r}");
            let dn = gpu.upload2(n.view()).unwrap();
            let mut dp = gpu.alloc2(dim).unwrap();
            let ran = gpu.conv2d_device(&dn, m.view(), Variant::Auto, &mut dp).unwrap();
            assert_eq!(ran, expected, "conv2d_device reports what Auto ran (radius {r})");
            let got = dp.to_host().unwrap();
            if let Err(e) = check_against_reference_2d(got.view(), n.view(), m.view()) {
                panic!("Auto (ran {ran}) radius {r} {dim:?}: {e}");
            }
        }
    }
}

// ---------------------------------------------------------------- strides

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn strided_1d_views_match_contiguous_copy() {
    let gpu = gpu();
    let base = random_array1(2 * 2500 + 1, 7);
    let mask_base = random_array1(17, 8); // step 2 -> 9 taps (radius 4); [5..10] -> 5 taps
    for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
        let masks = [mask_base.slice(s![..;2]), mask_base.slice(s![5..10])];
        for m in masks {
            for n in [base.slice(s![..;2]), base.slice(s![..;-1]), base.slice(s![1..;3])] {
                let strided = gpu.conv1d(n, m, v).unwrap_or_else(|e| panic!("{v}: {e}"));
                let contiguous = gpu
                    .conv1d(n.to_owned().view(), m.to_owned().view(), v)
                    .unwrap_or_else(|e| panic!("{v}: {e}"));
                assert_eq!(strided, contiguous, "{v}: strided view vs contiguous copy");
                if let Err(e) = check_against_reference_1d(strided.view(), n, m) {
                    panic!("{v}, strided: {e}");
                }
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn strided_2d_views_match_contiguous_copy() {
    let gpu = gpu();
    let base = random_array2((150, 90), 11); // transposed: 90 x 150
    let mask = random_array2((5, 5), 12); // not symmetric: transposing it matters
    for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
        for m in [mask.view(), mask.t()] {
            for n in [base.t(), base.slice(s![..;2, 1..;3]), base.slice(s![..;-1, ..])] {
                let strided = gpu.conv2d(n, m, v).unwrap_or_else(|e| panic!("{v}: {e}"));
                let contiguous = gpu
                    .conv2d(n.as_standard_layout().view(), m.as_standard_layout().view(), v)
                    .unwrap_or_else(|e| panic!("{v}: {e}"));
                assert_eq!(strided, contiguous, "{v}: strided view vs contiguous copy");
                if let Err(e) = check_against_reference_2d(strided.view(), n, m) {
                    panic!("{v}, strided: {e}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------- inputs untouched

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn caller_arrays_unchanged_after_call() {
    let gpu = gpu();
    let n1 = random_array1(3000, 21);
    let m1 = random_array1(7, 22);
    let (n1_before, m1_before) = (n1.clone(), m1.clone());
    for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
        gpu.conv1d(n1.view(), m1.view(), v).unwrap();
        assert_eq!(n1, n1_before, "{v} changed the input");
        assert_eq!(m1, m1_before, "{v} changed the mask");
    }
    let n2 = random_array2((70, 140), 23);
    let m2 = random_array2((5, 5), 24);
    let (n2_before, m2_before) = (n2.clone(), m2.clone());
    for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
        gpu.conv2d(n2.view(), m2.view(), v).unwrap();
        assert_eq!(n2, n2_before, "{v} changed the input");
        assert_eq!(m2, m2_before, "{v} changed the mask");
    }
}

// ---------------------------------------------------------------- device API

/// Output buffers start as NaN: an output element a kernel forgets to write stays NaN and
/// fails the tolerance check. The same buffers are reused across variants and masks.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn conv1d_device_reuses_output_buffer() {
    let gpu = gpu();
    let len = 2 * 1024 + 3;
    let n = random_array1(len, 31);
    let other = random_array1(len, 32);
    let dn = gpu.upload1(n.view()).unwrap();
    let dother = gpu.upload1(other.view()).unwrap();
    let mut dp = gpu.upload1(Array1::from_elem(len, f32::NAN).view()).unwrap();
    for (i, r) in [3usize, 0, 16, 40, 1].into_iter().enumerate() {
        let m = random_array1(2 * r + 1, 33 + i as u64);
        for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
            if r > v.max_radius().0 {
                continue;
            }
            for (input, host) in [(&dn, &n), (&dother, &other)] {
                gpu.conv1d_device(input, m.view(), v, &mut dp)
                    .unwrap_or_else(|e| panic!("{v}: {e}"));
                let got = dp.to_host().unwrap();
                let want = reference::conv1d(host.view(), m.view());
                let abs = reference::conv1d_abs(host.view(), m.view());
                assert_close_1d(got.view(), want.view(), abs.view(), m.len());
            }
        }
        // The input buffer is not written by any launch.
        assert_eq!(dn.to_host().unwrap(), n, "conv1d_device wrote to its input");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn conv2d_device_reuses_output_buffer() {
    let gpu = gpu();
    let dim = (67, 259);
    let n = random_array2(dim, 41);
    let other = random_array2(dim, 42);
    let dn = gpu.upload2(n.view()).unwrap();
    let dother = gpu.upload2(other.view()).unwrap();
    let mut dp = gpu.upload2(Array2::from_elem(dim, f32::NAN).view()).unwrap();
    for (i, r) in [2usize, 0, 8, 5, 15, 1].into_iter().enumerate() {
        let k = 2 * r + 1;
        let m = random_array2((k, k), 43 + i as u64);
        for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
            if r > v.max_radius().0 {
                continue;
            }
            for (input, host) in [(&dn, &n), (&dother, &other)] {
                gpu.conv2d_device(input, m.view(), v, &mut dp)
                    .unwrap_or_else(|e| panic!("{v}: {e}"));
                let got = dp.to_host().unwrap();
                let want = reference::conv2d(host.view(), m.view());
                let abs = reference::conv2d_abs(host.view(), m.view());
                assert_close_2d(got.view(), want.view(), abs.view(), m.len());
            }
        }
        assert_eq!(dn.to_host().unwrap(), n, "conv2d_device wrote to its input");
    }
}

/// Masks alternate on one Gpu (the `.const` symbol and the global mask buffer are cached
/// by value): every call must see its own mask, never the previous one.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn alternating_masks_each_take_effect() {
    let gpu = gpu();
    let n = random_array1(1500, 51);
    let masks = [random_array1(5, 52), random_array1(5, 53), random_array1(9, 54)];
    for round in 0..3 {
        for v in Variant::ALL_1D {
            for m in masks.iter().chain(masks.iter().rev()) {
                let got = gpu.conv1d(n.view(), m.view(), v).unwrap();
                if let Err(e) = check_against_reference_1d(got.view(), n.view(), m.view()) {
                    panic!("round {round}, {v}: {e}");
                }
            }
        }
    }
    let n = random_array2((40, 140), 55);
    let masks = [
        random_array2((3, 3), 56),
        random_array2((3, 3), 57),
        random_array2((5, 5), 58),
    ];
    for v in Variant::ALL_2D {
        for m in masks.iter().chain(masks.iter().rev()) {
            let got = gpu.conv2d(n.view(), m.view(), v).unwrap();
            if let Err(e) = check_against_reference_2d(got.view(), n.view(), m.view()) {
                panic!("{v}: {e}");
            }
        }
    }
}

// ---------------------------------------------------------------- large inputs

/// Independent f64 evaluation of one output and its Σ|terms| (spot checks of big images,
/// where the full reference would take seconds).
fn point_2d(n: &Array2<f32>, m: &Array2<f32>, y: usize, x: usize) -> (f32, f32) {
    let r = m.nrows() / 2;
    let (mut acc, mut abs) = (0.0f64, 0.0f64);
    for ((i, j), &w) in m.indexed_iter() {
        let (iy, ix) = ((y + i).wrapping_sub(r), (x + j).wrapping_sub(r));
        if let Some(&v) = n.get([iy, ix]) {
            acc += v as f64 * w as f64;
            abs += (v as f64 * w as f64).abs();
        }
    }
    (acc as f32, abs as f32)
}

/// Images with thousands of tiles: more than the blocks resident on an H200 (132 SMs), so
/// conv2d_fast's persistent blocks loop over several tiles (double-buffered), for every
/// compiled radius, widths with and without 16-byte rows. The whole output is compared
/// with conv2d_tiled_cached (itself proptested against the reference: the two may differ
/// by both tolerances), and spot-checked against an f64 evaluation.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn large_images_fast_vs_tiled_cached_and_spot_checks() {
    let gpu = gpu();
    for (dim, seed) in [((8000, 1030), 61u64), ((3000, 2048), 62)] {
        let n = random_array2(dim, seed);
        for r in gpuconv::variant::FAST_2D_RADII {
            let k = 2 * r + 1;
            let m = random_array2((k, k), seed + 100 + r as u64);
            let fast = gpu.conv2d(n.view(), m.view(), Variant::Conv2dFast).unwrap();
            let other = gpu.conv2d(n.view(), m.view(), Variant::Conv2dTiledCached).unwrap();
            let abs = gpu
                .conv2d(
                    n.mapv(f32::abs).view(),
                    m.mapv(f32::abs).view(),
                    Variant::Conv2dTiledCached,
                )
                .unwrap();
            let mut bad = Vec::new();
            for (((y, x), &a), (&b, &s)) in fast.indexed_iter().zip(other.iter().zip(abs.iter())) {
                // 2x: both kernels err; the abs sum from the GPU is itself within 1%.
                let tol = 2.0 * reference::tolerance(s as f64 * 1.01, k * k);
                let within = (a as f64 - b as f64).abs() <= tol; // false for NaN
                if !within && bad.len() < 8 {
                    bad.push(format!("[{y}][{x}]: fast {a:e}, tiled_cached {b:e}, tol {tol:e}"));
                }
            }
            assert!(
                bad.is_empty(),
                "{dim:?} r={r}: conv2d_fast vs conv2d_tiled_cached:\n{}",
                bad.join("\n")
            );
            // Spot checks: corners, tile seams, and a pseudo-random sample.
            let (h, w) = dim;
            let mut points = vec![
                (0, 0),
                (h - 1, w - 1),
                (0, w - 1),
                (h - 1, 0),
                (31, 127),
                (32, 128),
                (h / 2, 1023),
            ];
            points.extend((0..400u64).map(|i| {
                let z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
                ((z >> 7) as usize % h, (z >> 37) as usize % w)
            }));
            for (y, x) in points {
                let (want, s) = point_2d(&n, &m, y, x);
                let tol = reference::tolerance(s as f64, k * k);
                assert!(
                    (fast[[y, x]] as f64 - want as f64).abs() <= tol,
                    "{dim:?} r={r} [{y}][{x}]: fast {}, f64 {want}, tol {tol:e}",
                    fast[[y, x]]
                );
            }
        }
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
    let n = random_array1(3_000_001, 71);
    for r in [5usize, 40] {
        let m = random_array1(2 * r + 1, 72 + r as u64);
        let want = reference::conv1d(n.view(), m.view());
        let abs = reference::conv1d_abs(n.view(), m.view());
        for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
            if r > v.max_radius().0 {
                continue;
            }
            let got = gpu.conv1d(n.view(), m.view(), v).unwrap();
            if let Err(e) = gpuconv_tests::check_close_1d(got.view(), want.view(), abs.view(), m.len()) {
                panic!("{v} r={r} len {}: {e}", n.len());
            }
        }
    }
}
