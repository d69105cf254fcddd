//! Shared helpers of the gpuconv integration tests (`tests/tests/*.rs`), one set for
//! every dimension: cases are `ArrayD`s, so one proptest body serves 1D, 2D and 3D.
//!
//! GPU gating: `build.rs` sets `cfg(gpu_present)` when a GPU is visible at build time
//! (`/dev/nvidia0`) or `GPUCONV_GPU_TESTS=1`. Every test that needs the GPU carries
//!
//! ```text
//! #[cfg_attr(not(gpu_present), ignore = "no GPU on this machine: GPU test NOT run (...)")]
//! ```
//!
//! so that without a GPU cargo lists it as *ignored*, never as passed; run with
//! `--include-ignored` it calls [`gpu`], which panics loudly when there is no GPU.
use gpuconv::{reference, Gpu, Mode, Pixel, PixelKind, Variant};
use ndarray::{Array, ArrayD, ArrayView, Dimension, IxDyn};
use proptest::prelude::*;
use proptest::test_runner::{Config, FailurePersistence};

/// Whether the GPU tests were compiled in (`cfg(gpu_present)`, see `build.rs`).
pub const GPU_TESTS_COMPILED: bool = cfg!(gpu_present);

/// A CUDA context with the kernels loaded, or a loud panic saying why there is none.
pub fn gpu() -> Gpu {
    match Gpu::new() {
        Ok(g) => g,
        Err(e) => panic!(
            "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
             !!! GPU TEST FAILED: this test needs a CUDA GPU and Gpu::new() failed:\n\
             !!!   {e}\n\
             !!! (GPU tests compiled in: {GPU_TESTS_COMPILED}; they run when a GPU is\n\
             !!!  visible at build time or GPUCONV_GPU_TESTS=1, or with --include-ignored)\n\
             !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        ),
    }
}

/// Compares `got` with the f64 reference element-wise: `|got - want| <=
/// reference::tolerance(abs, taps)` where `abs` is the sum of |terms| of that output
/// (`reference::correlate_abs`). NaN and infinities fail. Err describes the first misses.
pub fn check_close<D: Dimension>(
    got: ArrayView<f32, D>,
    want: ArrayView<f32, D>,
    abs: ArrayView<f32, D>,
    taps: usize,
) -> Result<(), String> {
    if got.shape() != want.shape() || abs.shape() != want.shape() {
        return Err(format!(
            "shape mismatch: got {:?}, reference {:?}, abs {:?}",
            got.shape(),
            want.shape(),
            abs.shape()
        ));
    }
    let (mut bad, mut lines) = (0usize, Vec::new());
    for ((at, &g), (&w, &a)) in got.view().into_dyn().indexed_iter().zip(want.iter().zip(abs.iter())) {
        let tol = reference::tolerance(a as f64, taps);
        let err = (g as f64 - w as f64).abs();
        // NaN compares false: a NaN output (or error, or tolerance) is never within.
        let within = err <= tol && g.is_finite();
        if !within {
            bad += 1;
            if lines.len() < 8 {
                let idx: String = at.slice().iter().map(|i| format!("[{i}]")).collect();
                lines.push(format!(
                    "  {idx}: got {g:e}, reference {w:e}, |err| {err:e} > tol {tol:e}"
                ));
            }
        }
    }
    if bad == 0 {
        Ok(())
    } else {
        Err(format!(
            "{bad} of {} outputs outside tolerance ({taps} taps):\n{}",
            got.len(),
            lines.join("\n")
        ))
    }
}

/// Checks a GPU correlation against `reference::correlate` of the same input, mask and
/// ghost-cell mode.
pub fn check_against_reference<D: Dimension>(
    got: ArrayView<f32, D>,
    n: ArrayView<f32, D>,
    m: ArrayView<f32, D>,
    mode: Mode,
) -> Result<(), String> {
    let (want, abs) = reference::correlate_with_abs(n, m.view(), mode);
    check_close(got, want.view(), abs.view(), m.len())
}

/// Panicking [`check_against_reference`] with ghost cells 0.
pub fn assert_matches_reference<D: Dimension>(
    got: ArrayView<f32, D>,
    n: ArrayView<f32, D>,
    m: ArrayView<f32, D>,
    what: &str,
) {
    if let Err(e) = check_against_reference(got, n, m, Mode::Zero) {
        panic!("{what}: GPU result differs from the reference: {e}");
    }
}

/// A `(height, width, channels)` image of pixel type `T` from `seed`: u8 values over the
/// whole range 0..=255, f32 values in [-1, 1].
pub fn random_image<T: Pixel>(dim: (usize, usize, usize), seed: u64) -> ndarray::Array3<T> {
    let v = random_vec(dim.0 * dim.1 * dim.2, seed);
    let px = v.into_iter().map(|x| match T::KIND {
        PixelKind::U8 => T::from_f32(((x + 1.0) * 127.5).round()),
        PixelKind::F32 => T::from_f32(x),
    });
    ndarray::Array3::from_shape_vec(dim, px.collect()).expect("shape")
}

/// Checks a filtered image against the f64 reference correlation of the same pixels
/// (as f32) with the mask on every channel: f32 pixels within `reference::tolerance`;
/// u8 pixels within half a step plus that tolerance of the reference value saturated to
/// 0..=255 (rounding an f32 sum may fall either way of a .5 that the f64 sum does not).
pub fn check_image_against_reference<T: Pixel>(
    got: ndarray::ArrayView3<T>,
    img: ndarray::ArrayView3<T>,
    mask: ndarray::ArrayView2<f32>,
    mode: Mode,
) -> Result<(), String> {
    let f = img.mapv(T::to_f32);
    let m3 = mask.insert_axis(ndarray::Axis(2));
    let (want, abs) = reference::correlate_with_abs(f.view(), m3.view(), mode);
    if got.dim() != want.dim() {
        return Err(format!("shape {:?}, reference {:?}", got.dim(), want.dim()));
    }
    let (mut bad, mut lines) = (0usize, Vec::new());
    for (((y, x, c), g), (&w, &a)) in got.indexed_iter().zip(want.iter().zip(abs.iter())) {
        let tol = reference::tolerance(a as f64, mask.len());
        let (g, w) = (g.to_f32() as f64, w as f64);
        let within = match T::KIND {
            PixelKind::F32 => (g - w).abs() <= tol,
            PixelKind::U8 => (g - w.clamp(0.0, 255.0)).abs() <= 0.5 + tol,
        };
        if !within {
            bad += 1;
            if lines.len() < 8 {
                lines.push(format!("  [{y}][{x}][{c}]: got {g}, reference {w} (tol {tol:e})"));
            }
        }
    }
    if bad == 0 {
        Ok(())
    } else {
        Err(format!(
            "{bad} of {} pixels outside tolerance:\n{}",
            got.len(),
            lines.join("\n")
        ))
    }
}

/// `len` pseudo-random values in [-1, 1] from `seed` (SplitMix64): deterministic, so a
/// proptest case is (sizes, radii, seed) and shrinks on sizes, not on thousands of floats.
pub fn random_vec(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed ^ 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            // 24 random bits -> [0, 1] exactly representable -> [-1, 1].
            ((z >> 40) as f32 / ((1u32 << 24) - 1) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// A random array of shape `shape` (`len`, `(h, w)`, `(d, h, w)` or an `IxDyn`) in [-1, 1].
pub fn random_array<Sh: ndarray::IntoDimension>(shape: Sh, seed: u64) -> Array<f32, Sh::Dim> {
    let dim = shape.into_dimension();
    Array::from_shape_vec(dim.clone(), random_vec(dim.size(), seed)).expect("shape")
}

/// One test case, any dimension: the input's shape and the mask's (both outermost
/// first), and the seed of the values.
#[derive(Clone, Debug)]
pub struct Case {
    /// Input shape (every side >= 1).
    pub shape: Vec<usize>,
    /// Mask radius along each axis, outermost first: the mask is `2r+1` along each.
    pub radius: Vec<usize>,
    /// Seed of the input (the mask uses seed+1).
    pub seed: u64,
}

impl Case {
    /// The input.
    pub fn input(&self) -> ArrayD<f32> {
        random_array(IxDyn(&self.shape), self.seed)
    }
    /// The mask.
    pub fn mask(&self) -> ArrayD<f32> {
        let shape: Vec<usize> = self.radius.iter().map(|r| 2 * r + 1).collect();
        random_array(IxDyn(&shape), self.seed.wrapping_add(1))
    }
    /// A mask of rank 1 of the same shape (one random 1D mask per axis, multiplied in
    /// f32 as a user would build it), for the separable families.
    pub fn rank1_mask(&self) -> ArrayD<f32> {
        let axes: Vec<Vec<f32>> = (self.radius.iter().enumerate())
            .map(|(a, r)| random_vec(2 * r + 1, self.seed.wrapping_add(2 + a as u64)))
            .collect();
        outer(&axes)
    }
    /// The mask `v` takes: rank 1 for a separable family, else [`Case::mask`].
    pub fn mask_for(&self, v: Variant) -> ArrayD<f32> {
        if v.family().is_some_and(|f| f.separable) {
            self.rank1_mask()
        } else {
            self.mask()
        }
    }
    /// The largest radius.
    pub fn max_radius(&self) -> usize {
        self.radius.iter().copied().max().unwrap_or(0)
    }
    /// The mask's radii as the kernels take them: x (innermost) first.
    pub fn radius_x_first(&self) -> [u32; 3] {
        let mut r = [0u32; 3];
        for (i, v) in self.radius.iter().rev().enumerate() {
            r[i] = *v as u32;
        }
        r
    }
}

/// The 1D tile of the textbook kernels and of the fast kernel (outputs per block).
pub const TILE_1D: usize = 1024;
/// Widths that straddle the textbook tiles (8, 32), the fast kernels' 128 tile and
/// 16-byte groups.
pub const SPECIAL_WIDTHS: &[usize] = &[
    1, 2, 3, 5, 7, 8, 9, 31, 32, 33, 127, 128, 129, 130, 131, 255, 256, 257, 259,
];
/// Heights that straddle the textbook tiles (4, 8, 32) and the fast kernels' 16/24/32-row tiles.
pub const SPECIAL_HEIGHTS: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64, 65];
/// Depths that straddle the textbook tiles (4, 8) and the fast kernel's 64-plane chunks.
pub const SPECIAL_DEPTHS: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 66, 129];

/// Reference work budget per case: elements · taps (the f64 reference is slow).
pub const WORK: usize = 6_000_000;

fn pick(special: &'static [usize], max: usize) -> BoxedStrategy<usize> {
    let fit: Vec<usize> = special.iter().copied().filter(|&v| v <= max).collect();
    prop_oneof![3 => 1..=max, 1 => proptest::sample::select(fit)].boxed()
}

/// Radii for a variant whose isotropic limit is `max`: mostly small, some up to
/// min(max, `cap`).
fn radius(max: usize, small: usize, cap: usize) -> BoxedStrategy<usize> {
    let cap = max.min(cap);
    prop_oneof![6 => 0..=cap.min(small), 3 => 0..=cap].boxed()
}

/// Per-axis radii of `dim` axes around a drawn radius `r`: mostly the same on every
/// axis, one case in four independent in `0..=r` (rectangular masks).
fn radii(dim: usize, r: usize) -> BoxedStrategy<Vec<usize>> {
    prop_oneof![
        3 => Just(vec![r; dim]),
        1 => proptest::collection::vec(0..=r, dim),
    ]
    .boxed()
}

/// Cases for a 1D variant whose radius may reach `max`: lengths mostly short, up to ~5
/// tiles and multiples of the 1024 tile ±2; radii mostly <= 16, some up to min(max,
/// 3000), and some larger than the signal (within `max`).
pub fn case_1d(max: usize) -> BoxedStrategy<Case> {
    let cap = max.min(3000);
    let len = prop_oneof![
        4 => 1usize..=40,
        3 => 1usize..=5 * TILE_1D,
        2 => (1usize..=4, -2isize..=2).prop_map(|(k, d)| ((k * TILE_1D) as isize + d).max(1) as usize),
    ];
    (len, any::<u64>())
        .prop_flat_map(move |(len, seed)| {
            let over_lo = (len + 1).min(cap);
            let over_hi = (len + 64).min(cap);
            let r = prop_oneof![6 => 0..=cap.min(16), 2 => 0..=cap, 2 => over_lo..=over_hi];
            r.prop_map(move |r| Case {
                shape: vec![len],
                radius: vec![r],
                seed,
            })
        })
        .boxed()
}

/// Cases for a 2D variant whose radius may reach `max`: radii mostly <= 8, some up to
/// min(max, 40), some rectangular; images up to ~300 wide (several 32 and 128 tiles)
/// within the work budget; and tiny images under a larger mask.
pub fn case_2d(max: usize) -> BoxedStrategy<Case> {
    let general = radius(max, 8, 40).prop_flat_map(|r| radii(2, r)).prop_flat_map(|rad| {
        let taps: usize = rad.iter().map(|r| 2 * r + 1).product();
        let area = (WORK / taps).max(36);
        pick(SPECIAL_WIDTHS, area.min(300)).prop_flat_map(move |w| {
            let rad = rad.clone();
            let hmax = (area / w).clamp(1, 100);
            (pick(SPECIAL_HEIGHTS, hmax), any::<u64>()).prop_map(move |(h, seed)| Case {
                shape: vec![h, w],
                radius: rad.clone(),
                seed,
            })
        })
    });
    prop_oneof![8 => general, 2 => small_under_mask(2, max.min(40))].boxed()
}

/// Cases for a 3D variant whose radius may reach `max`: radii mostly <= 3, some up to
/// min(max, 8), some rectangular; volumes from 1x1x1 to several tiles along every axis
/// (x past 128, y past 16, z past the 64-plane chunk) within the work budget; and tiny
/// volumes under a larger mask.
pub fn case_3d(max: usize) -> BoxedStrategy<Case> {
    let general = radius(max, 3, 8).prop_flat_map(|r| radii(3, r)).prop_flat_map(|rad| {
        let taps: usize = rad.iter().map(|r| 2 * r + 1).product();
        let volume = (WORK / taps).max(64);
        pick(SPECIAL_WIDTHS, volume.min(260)).prop_flat_map(move |w| {
            let rad = rad.clone();
            let hmax = (volume / w).clamp(1, 40);
            pick(SPECIAL_HEIGHTS, hmax).prop_flat_map(move |h| {
                let rad = rad.clone();
                let dmax = (volume / (w * h)).clamp(1, 140);
                (pick(SPECIAL_DEPTHS, dmax), any::<u64>()).prop_map(move |(d, seed)| Case {
                    shape: vec![d, h, w],
                    radius: rad.clone(),
                    seed,
                })
            })
        })
    });
    prop_oneof![8 => general, 2 => small_under_mask(3, max.min(8))].boxed()
}

/// Arrays whose every side is at most the radius (the mask is wider than the array).
fn small_under_mask(dim: usize, cap: usize) -> BoxedStrategy<Case> {
    (1..=cap.max(1))
        .prop_flat_map(move |r| {
            let r = r.min(cap);
            (proptest::collection::vec(1..=r.max(1), dim), any::<u64>()).prop_map(move |(shape, seed)| Case {
                shape,
                radius: vec![r; dim],
                seed,
            })
        })
        .boxed()
}

/// Ghost-cell modes for a variant: every mode (constant with a random value) where the
/// variant implements them, else zero.
pub fn mode_for(v: Variant) -> BoxedStrategy<Mode> {
    if !v.takes_pixels(PixelKind::F32) {
        // image_mma takes integer fills only (u8 sums exact in fp16 products).
        prop_oneof![
            Just(Mode::Zero),
            (-255i32..=255).prop_map(|f| Mode::Constant(f as f32)),
            Just(Mode::Nearest),
            Just(Mode::Reflect),
            Just(Mode::Mirror),
            Just(Mode::Wrap),
        ]
        .boxed()
    } else if v.all_modes() {
        prop_oneof![
            Just(Mode::Zero),
            (-2.0f32..2.0).prop_map(Mode::Constant),
            Just(Mode::Nearest),
            Just(Mode::Reflect),
            Just(Mode::Mirror),
            Just(Mode::Wrap),
        ]
        .boxed()
    } else {
        Just(Mode::Zero).boxed()
    }
}

/// One image test case: `(height, width, channels)`, extra elements of row pitch beyond
/// the pixels (`None`: the driver's padded pitch), mask radii `(ry, rx)`, pixel type.
#[derive(Clone, Debug)]
pub struct ImageCase {
    /// Rows.
    pub height: usize,
    /// Pixels per row.
    pub width: usize,
    /// Interleaved channels, 1 to 4.
    pub channels: usize,
    /// `Some(e)`: rows `width·channels + e` elements apart; `None`: cuMemAllocPitch's.
    pub extra_pitch: Option<usize>,
    /// Mask radius down and across.
    pub radius: (usize, usize),
    /// u8 pixels (else f32).
    pub u8: bool,
    /// Seed of the values.
    pub seed: u64,
}

impl ImageCase {
    /// The mask, `(2ry+1) x (2rx+1)`.
    pub fn mask(&self) -> ndarray::Array2<f32> {
        random_array(
            (2 * self.radius.0 + 1, 2 * self.radius.1 + 1),
            self.seed.wrapping_add(1),
        )
    }
}

/// Image cases for an image variant whose radius may reach `max`: odd and even widths
/// straddling the 128-element tiles in every channel count, heights past the tiles,
/// driver pitches and odd ones, u8 and f32, rectangular masks.
pub fn case_image(max: usize) -> BoxedStrategy<ImageCase> {
    let cap = max.min(6);
    (
        1usize..=4,
        pick(SPECIAL_WIDTHS, 200),
        pick(SPECIAL_HEIGHTS, 70),
        prop_oneof![1 => Just(None), 1 => (0usize..9).prop_map(Some)],
        (0..=cap, 0..=cap),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(channels, width, height, extra_pitch, radius, u8, seed)| ImageCase {
            height,
            width,
            channels,
            extra_pitch,
            radius,
            u8,
            seed,
        })
        .boxed()
}

/// The case strategy for a variant: by its dimension, within its largest radius.
pub fn case_for(v: Variant) -> BoxedStrategy<Case> {
    let max = v.max_radius().0;
    match v.dim() {
        1 => case_1d(max),
        2 => case_2d(max),
        3 => case_3d(max),
        d => panic!("no {d}D cases"),
    }
}

/// proptest configuration: `cases` per test (`PROPTEST_CASES` overrides), no regression
/// files written, shrinking bounded (each shrink step is a GPU launch plus the reference).
pub fn proptest_config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None::<Box<dyn FailurePersistence>>,
        max_shrink_iters: 512,
        ..Config::default()
    }
}

/// Whether `v` takes only rank-1 (separable) masks.
pub fn takes_rank1_only(v: Variant) -> bool {
    v.family().is_some_and(|f| f.separable)
}

/// The outer product of 1D masks, outermost axis first, multiplied in f32 as a user
/// would build it: a rank-1 mask.
pub fn outer(axes: &[Vec<f32>]) -> ArrayD<f32> {
    let shape: Vec<usize> = axes.iter().map(Vec::len).collect();
    let mut taps = vec![1.0f32];
    for a in axes {
        taps = taps.iter().flat_map(|&t| a.iter().map(move |&v| t * v)).collect();
    }
    ArrayD::from_shape_vec(IxDyn(&shape), taps).expect("shape")
}

/// The mask `v` takes in place of `m`: `m` itself, or, for a family of rank-1 masks, the
/// outer product of `m`'s fibres through its first tap along each axis (still random and
/// asymmetric; the same radii).
pub fn rank1_if_needed<D: Dimension>(v: Variant, m: ArrayView<f32, D>) -> Array<f32, D> {
    if !takes_rank1_only(v) || m.ndim() < 2 {
        return m.to_owned();
    }
    // The first lane along each axis: the fibre through the first tap.
    let axes: Vec<Vec<f32>> = (0..m.ndim())
        .map(|a| {
            m.lanes(ndarray::Axis(a))
                .into_iter()
                .next()
                .expect("non-empty")
                .to_vec()
        })
        .collect();
    outer(&axes).into_dimensionality::<D>().expect("same dimension")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;

    #[test]
    fn rank1_if_needed_multiplies_the_fibres_through_the_first_tap() {
        let m = random_array((3, 5, 7), 11);
        let got = rank1_if_needed(Variant::Conv3dSeparable, m.view());
        for ((z, y, x), &g) in got.indexed_iter() {
            assert_eq!(g, m[[z, 0, 0]] * m[[0, y, 0]] * m[[0, 0, x]], "at {z},{y},{x}");
        }
        // A family of general masks takes the mask as it is.
        assert_eq!(rank1_if_needed(Variant::Conv3dFast, m.view()), m);
    }

    #[test]
    fn random_values_are_in_range_and_deterministic() {
        let v = random_vec(10_000, 5);
        assert!(v.iter().all(|x| (-1.0..=1.0).contains(x)));
        assert!(v.iter().any(|&x| x < -0.9) && v.iter().any(|&x| x > 0.9));
        assert_eq!(v, random_vec(10_000, 5));
        assert_ne!(v, random_vec(10_000, 6));
    }

    #[test]
    fn check_close_accepts_reference_and_catches_a_missing_term() {
        let n = random_array(3000, 1);
        let m = random_array(33, 2);
        let want = reference::conv(n.view(), m.view());
        check_against_reference(want.view(), n.view(), m.view(), Mode::Zero).unwrap();
        // Drop the last tap (what an off-by-one loop bound does): must be caught.
        let mut short = m.clone();
        short[32] = 0.0;
        let wrong = reference::conv(n.view(), short.view());
        assert!(check_against_reference(wrong.view(), n.view(), m.view(), Mode::Zero).is_err());
        let mut nan = want.clone();
        nan[7] = f32::NAN;
        let err = check_against_reference(nan.view(), n.view(), m.view(), Mode::Zero).unwrap_err();
        assert!(err.contains("[7]"), "{err}");
        let n3 = random_array((9, 10, 11), 3);
        let m3 = random_array((3, 5, 3), 4);
        let want3 = reference::conv(n3.view(), m3.view());
        check_against_reference(want3.view(), n3.view(), m3.view(), Mode::Zero).unwrap();
        let mut off = want3.clone();
        off[[8, 9, 10]] += 1e-3;
        let err = check_against_reference(off.view(), n3.view(), m3.view(), Mode::Zero).unwrap_err();
        assert!(err.contains("[8][9][10]"), "{err}");
        // A wrong ghost-cell mode is caught too.
        let reflect = reference::correlate(n3.view(), m3.view(), Mode::Reflect);
        assert!(check_against_reference(reflect.view(), n3.view(), m3.view(), Mode::Zero).is_err());
    }

    /// The strategies draw valid cases (sides >= 1, radius within the variant's limit)
    /// and cover what the proptests promise: multi-tile sizes along every axis, radius
    /// larger than every side, rectangular masks.
    #[test]
    fn strategies_stay_in_bounds_and_cover_the_edges() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for &v in Variant::ALL.iter().filter(|v| !v.is_image()) {
            let (max, dim) = (v.max_radius().0, v.dim());
            let (mut over, mut rect) = (0, 0);
            let mut multi = vec![0; dim]; // per axis: more than one tile of the fast kernels
            let tile = [[TILE_1D, 0, 0], [128, 16, 0], [128, 16, 64]][dim - 1];
            for _ in 0..600 {
                let c = case_for(v).new_tree(&mut runner).unwrap().current();
                assert_eq!((c.shape.len(), c.radius.len()), (dim, dim), "{v}: {c:?}");
                assert!(c.shape.iter().all(|&s| s >= 1), "{v}: {c:?}");
                assert!(c.max_radius() <= max, "{v}: {c:?}");
                let rank1 = v.family().unwrap().separable;
                v.resolve_mask(dim, c.radius_x_first(), rank1, Mode::Zero)
                    .unwrap_or_else(|e| panic!("{v}: {c:?}: {e}"));
                over += c.shape.iter().all(|&s| s < c.max_radius()) as u32;
                rect += c.radius.iter().any(|&r| r != c.max_radius()) as u32;
                for (axis, &s) in c.shape.iter().rev().enumerate() {
                    multi[axis] += (s > tile[axis]) as u32;
                }
            }
            assert!(over > 10, "{v}: radius over every side drawn {over} times");
            assert!(
                max == 0 || dim == 1 || rect > 10,
                "{v}: rectangular masks drawn {rect} times"
            );
            for (axis, &m) in multi.iter().enumerate() {
                assert!(m > 5, "{v}: axis {axis} past one tile drawn {m} times");
            }
        }
    }
}
