//! Shared helpers of the gpuconv integration tests (`tests/tests/*.rs`).
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
use gpuconv::{reference, Gpu};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
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

/// The banner `gpu_status_banner` prints: whether the GPU tests run or are ignored.
pub fn gpu_status_banner_text() -> String {
    let bar = "!".repeat(78);
    let body = if GPU_TESTS_COMPILED {
        "!!! GPU TESTS ARE COMPILED IN (cfg gpu_present): they run, and FAIL if there is\n\
         !!! no usable CUDA GPU. None of them is skipped."
            .to_string()
    } else {
        "!!! NO GPU AT BUILD TIME: every GPU test is IGNORED, i.e. NOT RUN.\n\
         !!! Only the CPU reference, error mapping and PTX-content tests ran.\n\
         !!! On a GPU machine: rebuild (or GPUCONV_GPU_TESTS=1), or run the tests\n\
         !!! with `-- --include-ignored`."
            .to_string()
    };
    format!("\n{bar}\n{body}\n{bar}\n")
}

/// Compares `got` with the f64 reference element-wise: `|got - want| <=
/// reference::tolerance(abs, taps)` where `abs` is the sum of |terms| of that output
/// (`reference::conv1d_abs`). NaN and infinities fail. Err describes the first misses.
pub fn check_close_1d(
    got: ArrayView1<f32>,
    want: ArrayView1<f32>,
    abs: ArrayView1<f32>,
    taps: usize,
) -> Result<(), String> {
    if got.len() != want.len() || abs.len() != want.len() {
        return Err(format!(
            "length mismatch: got {}, reference {}, abs {}",
            got.len(),
            want.len(),
            abs.len()
        ));
    }
    let misses = got
        .iter()
        .zip(want.iter())
        .zip(abs.iter())
        .enumerate()
        .map(|(i, ((&g, &w), &a))| (format!("[{i}]"), g, w, a));
    report(misses, taps, got.len())
}

/// 2D version of [`check_close_1d`] (`abs` from `reference::conv2d_abs`).
pub fn check_close_2d(
    got: ArrayView2<f32>,
    want: ArrayView2<f32>,
    abs: ArrayView2<f32>,
    taps: usize,
) -> Result<(), String> {
    if got.dim() != want.dim() || abs.dim() != want.dim() {
        return Err(format!(
            "shape mismatch: got {:?}, reference {:?}, abs {:?}",
            got.dim(),
            want.dim(),
            abs.dim()
        ));
    }
    let misses = got
        .indexed_iter()
        .zip(want.iter())
        .zip(abs.iter())
        .map(|((((y, x), &g), &w), &a)| (format!("[{y}][{x}]"), g, w, a));
    report(misses, taps, got.len())
}

fn report(items: impl Iterator<Item = (String, f32, f32, f32)>, taps: usize, total: usize) -> Result<(), String> {
    let mut bad = 0usize;
    let mut lines = Vec::new();
    for (at, g, w, a) in items {
        let tol = reference::tolerance(a as f64, taps);
        let err = (g as f64 - w as f64).abs();
        // NaN compares false, so a NaN output (or error) is never within tolerance.
        let within = err <= tol && g.is_finite();
        if !within {
            bad += 1;
            if lines.len() < 8 {
                lines.push(format!(
                    "  {at}: got {g:e}, reference {w:e}, |err| {err:e} > tol {tol:e}"
                ));
            }
        }
    }
    if bad == 0 {
        Ok(())
    } else {
        Err(format!(
            "{bad} of {total} outputs outside tolerance ({taps} taps):\n{}",
            lines.join("\n")
        ))
    }
}

/// Panicking [`check_close_1d`].
pub fn assert_close_1d(got: ArrayView1<f32>, want: ArrayView1<f32>, abs: ArrayView1<f32>, taps: usize) {
    if let Err(e) = check_close_1d(got, want, abs, taps) {
        panic!("GPU result differs from reference::conv1d: {e}");
    }
}

/// Panicking [`check_close_2d`].
pub fn assert_close_2d(got: ArrayView2<f32>, want: ArrayView2<f32>, abs: ArrayView2<f32>, taps: usize) {
    if let Err(e) = check_close_2d(got, want, abs, taps) {
        panic!("GPU result differs from reference::conv2d: {e}");
    }
}

/// Checks a GPU 1D result against `reference::conv1d` of the same input and mask.
pub fn check_against_reference_1d(got: ArrayView1<f32>, n: ArrayView1<f32>, m: ArrayView1<f32>) -> Result<(), String> {
    let want = reference::conv1d(n, m);
    let abs = reference::conv1d_abs(n, m);
    check_close_1d(got, want.view(), abs.view(), m.len())
}

/// Checks a GPU 2D result against `reference::conv2d` of the same input and mask.
pub fn check_against_reference_2d(got: ArrayView2<f32>, n: ArrayView2<f32>, m: ArrayView2<f32>) -> Result<(), String> {
    let want = reference::conv2d(n, m);
    let abs = reference::conv2d_abs(n, m);
    check_close_2d(got, want.view(), abs.view(), m.len())
}

/// `len` pseudo-random values in [-1, 1] from `seed` (SplitMix64): deterministic, so a
/// proptest case is (sizes, radius, seed) and shrinks on sizes, not on thousands of floats.
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

/// A random signal in [-1, 1].
pub fn random_array1(len: usize, seed: u64) -> Array1<f32> {
    Array1::from(random_vec(len, seed))
}

/// A random (height, width) image in [-1, 1].
pub fn random_array2(dim: (usize, usize), seed: u64) -> Array2<f32> {
    Array2::from_shape_vec(dim, random_vec(dim.0 * dim.1, seed)).expect("h*w values")
}

/// One 1D test case: signal length, mask radius, seed of the values.
#[derive(Clone, Debug)]
pub struct Case1d {
    /// Signal length (>= 1).
    pub len: usize,
    /// Mask radius: 2r+1 taps.
    pub radius: usize,
    /// Seed of the signal (the mask uses seed+1).
    pub seed: u64,
}

impl Case1d {
    /// The signal.
    pub fn input(&self) -> Array1<f32> {
        random_array1(self.len, self.seed)
    }
    /// The mask, 2r+1 taps.
    pub fn mask(&self) -> Array1<f32> {
        random_array1(2 * self.radius + 1, self.seed.wrapping_add(1))
    }
}

/// One 2D test case.
#[derive(Clone, Debug)]
pub struct Case2d {
    /// Image rows (>= 1).
    pub height: usize,
    /// Image columns (>= 1).
    pub width: usize,
    /// Mask radius: (2r+1)^2 taps.
    pub radius: usize,
    /// Seed of the image (the mask uses seed+1).
    pub seed: u64,
}

impl Case2d {
    /// The (height, width) image.
    pub fn input(&self) -> Array2<f32> {
        random_array2((self.height, self.width), self.seed)
    }
    /// The square mask.
    pub fn mask(&self) -> Array2<f32> {
        let k = 2 * self.radius + 1;
        random_array2((k, k), self.seed.wrapping_add(1))
    }
}

/// The 1D tile of the textbook kernels and of the fast kernel (outputs per block).
pub const TILE_1D: usize = 1024;

/// Signal lengths: mostly short, up to ~5 tiles, and exact multiples of the 1024 tile ±2.
pub fn len_1d() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => 1usize..=40,
        3 => 1usize..=5 * TILE_1D,
        2 => (1usize..=4, -2isize..=2).prop_map(|(k, d)| (k * TILE_1D) as isize + d).prop_map(|x| x.max(1) as usize),
    ]
}

/// Cases for a 1D variant whose radius may reach `max_radius`: radii mostly <= 16, some up
/// to min(max, 3000), and some larger than the signal (within `max_radius`).
pub fn case_1d(max_radius: usize) -> impl Strategy<Value = Case1d> {
    let cap = max_radius.min(3000);
    (len_1d(), any::<u64>()).prop_flat_map(move |(len, seed)| {
        let over_lo = (len + 1).min(cap);
        let over_hi = (len + 64).min(cap);
        let radius = prop_oneof![
            6 => 0..=cap.min(16),
            2 => 0..=cap,
            2 => over_lo..=over_hi,
        ];
        radius.prop_map(move |radius| Case1d { len, radius, seed })
    })
}

/// Widths that straddle the 32 tile, the fast kernel's 128 tile and 16-byte groups.
pub const SPECIAL_WIDTHS: &[usize] = &[1, 2, 3, 5, 31, 32, 33, 127, 128, 129, 130, 131, 255, 256, 257, 259];
/// Heights that straddle the 32 tile and the fast kernel's 16/32-row tiles.
pub const SPECIAL_HEIGHTS: &[usize] = &[1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65];

/// Reference work budget per case: height·width·taps (the f64 reference is slow).
const WORK_2D: usize = 6_000_000;

fn pick(special: &'static [usize], max: usize) -> impl Strategy<Value = usize> {
    let fit: Vec<usize> = special.iter().copied().filter(|&v| v <= max).collect();
    prop_oneof![3 => 1..=max, 1 => proptest::sample::select(fit)]
}

/// Cases for a 2D variant whose radius may reach `max_radius`: radii mostly <= 8, some up
/// to min(max, 40); images up to ~300 wide (several 32 and 128 tiles) within a work budget;
/// and tiny images under a larger mask.
pub fn case_2d(max_radius: usize) -> impl Strategy<Value = Case2d> {
    let cap = max_radius.min(40);
    let general = prop_oneof![6 => 0..=cap.min(8), 3 => 0..=cap].prop_flat_map(|radius| {
        let taps = (2 * radius + 1).pow(2);
        let area = (WORK_2D / taps).max(36);
        pick(SPECIAL_WIDTHS, area.min(300)).prop_flat_map(move |width| {
            let hmax = (area / width).clamp(1, 100);
            (pick(SPECIAL_HEIGHTS, hmax), any::<u64>()).prop_map(move |(height, seed)| Case2d {
                height,
                width,
                radius,
                seed,
            })
        })
    });
    let small_image = (1..=cap.max(1)).prop_flat_map(move |r| {
        let radius = r.min(cap);
        (1..=radius.max(1), 1..=radius.max(1), any::<u64>()).prop_map(move |(height, width, seed)| Case2d {
            height,
            width,
            radius,
            seed,
        })
    });
    prop_oneof![8 => general, 2 => small_image]
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

#[cfg(test)]
mod tests {
    use super::*;
    use gpuconv::Variant;
    use proptest::strategy::ValueTree;

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
        let n = random_array1(3000, 1);
        let m = random_array1(33, 2);
        let want = reference::conv1d(n.view(), m.view());
        check_against_reference_1d(want.view(), n.view(), m.view()).unwrap();
        // Drop the last tap (what an off-by-one loop bound does): must be caught.
        let mut short = m.clone();
        short[32] = 0.0;
        let wrong = reference::conv1d(n.view(), short.view());
        assert!(check_against_reference_1d(wrong.view(), n.view(), m.view()).is_err());
        let mut nan = want.clone();
        nan[7] = f32::NAN;
        let err = check_against_reference_1d(nan.view(), n.view(), m.view()).unwrap_err();
        assert!(err.contains("[7]"), "{err}");
        let n2 = random_array2((40, 50), 3);
        let m2 = random_array2((7, 7), 4);
        let want2 = reference::conv2d(n2.view(), m2.view());
        check_against_reference_2d(want2.view(), n2.view(), m2.view()).unwrap();
        let mut off = want2.clone();
        off[[39, 49]] += 1e-3;
        let err = check_against_reference_2d(off.view(), n2.view(), m2.view()).unwrap_err();
        assert!(err.contains("[39][49]"), "{err}");
    }

    /// The strategies draw valid cases (sizes >= 1, radius within the variant's limit) and
    /// cover what the proptests promise: multi-tile sizes, radius larger than the input.
    #[test]
    fn strategies_stay_in_bounds_and_cover_the_edges() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for v in Variant::ALL_1D {
            let max = v.max_radius().0;
            let (mut over, mut multi_tile, mut odd_len) = (0, 0, 0);
            for _ in 0..500 {
                let c = case_1d(max).new_tree(&mut runner).unwrap().current();
                assert!(c.len >= 1 && c.radius <= max.min(3000), "{v}: {c:?}");
                over += (c.radius > c.len) as u32;
                multi_tile += (c.len > 2 * TILE_1D) as u32;
                odd_len += (!c.len.is_multiple_of(TILE_1D) && c.len > TILE_1D) as u32;
            }
            assert!(
                over > 10 && multi_tile > 10 && odd_len > 10,
                "{v}: {over} {multi_tile} {odd_len}"
            );
        }
        for v in Variant::ALL_2D {
            let max = v.max_radius().0;
            let (mut over, mut wide, mut not4, mut not128, mut tall, mut big_r) = (0, 0, 0, 0, 0, 0);
            for _ in 0..500 {
                let c = case_2d(max).new_tree(&mut runner).unwrap().current();
                assert!(c.height >= 1 && c.width >= 1 && c.radius <= max.min(40), "{v}: {c:?}");
                let taps = (2 * c.radius + 1).pow(2);
                // Within the budget, or a tiny image (sides <= r) under its mask.
                let small = c.height <= c.radius && c.width <= c.radius;
                assert!(
                    small || c.height * c.width * taps <= WORK_2D.max(36 * taps),
                    "{v}: {c:?}"
                );
                over += (c.radius > c.height && c.radius > c.width) as u32;
                wide += (c.width > 128) as u32;
                not4 += (!c.width.is_multiple_of(4)) as u32;
                not128 += (c.width > 128 && !c.width.is_multiple_of(128)) as u32;
                tall += (c.height > 32) as u32;
                big_r += (c.radius > 8) as u32;
            }
            assert!(
                over > 10 && wide > 10 && not4 > 10 && not128 > 10 && tall > 10,
                "{v}: {over} {wide} {not4} {not128} {tall}"
            );
            assert!(
                max <= 8 || big_r > 10,
                "{v}: radii beyond the fast range drawn {big_r} times"
            );
        }
    }
}
