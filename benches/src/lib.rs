//! Shared pieces of the benchmarks: the benchmark cases, deterministic inputs,
//! and spot checks of huge outputs against the CPU reference.
use gpuconv::reference::{conv1d_at, conv2d_at, tolerance};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

/// Side of the square 2D benchmark image.
pub const SIZE_2D: usize = 8192;
/// Length of the 1D benchmark signal.
pub const SIZE_1D: usize = 1 << 28;
/// 2D radii of the roofline targets.
pub const RADII_2D: [usize; 4] = [1, 2, 3, 4];
/// 1D radii of the roofline targets.
pub const RADII_1D: [usize; 3] = [2, 4, 16];

/// Deterministic values in [-1, 1): a hash of the index, no RNG state to carry.
pub fn value(i: u64, seed: u64) -> f32 {
    let x = (i ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
        .rotate_left(31)
        .wrapping_mul(0x94D0_49BB_1331_11EB);
    (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

/// A benchmark signal of `len` values.
pub fn signal(len: usize) -> Array1<f32> {
    Array1::from_shape_fn(len, |i| value(i as u64, 1))
}

/// A benchmark image of `side` x `side` values.
pub fn image(side: usize) -> Array2<f32> {
    Array2::from_shape_fn((side, side), |(y, x)| value((y * side + x) as u64, 2))
}

/// A 1D mask of radius `r` (taps sum to about 1, no tap zero).
pub fn mask1(r: usize) -> Array1<f32> {
    let k = 2 * r + 1;
    Array1::from_shape_fn(k, |j| (1.5 + value(j as u64, 3)) / k as f32)
}

/// A 2D mask of radius `r`.
pub fn mask2(r: usize) -> Array2<f32> {
    let k = 2 * r + 1;
    Array2::from_shape_fn((k, k), |(y, x)| (1.5 + value((y * k + x) as u64, 4)) / (k * k) as f32)
}

/// Output positions worth checking in a 1D result: both ends, every tile seam of the
/// kernels (multiples of 256 and 1024), and a spread of pseudo-random ones.
fn sample_1d(len: usize, r: usize) -> Vec<usize> {
    let edge = (2 * r + 8).min(len);
    let mut idx: Vec<usize> = (0..edge).chain(len - edge..len).collect();
    for seam in (256..len).step_by(len / 512 / 256 * 256 + 256).take(512) {
        idx.extend(seam.saturating_sub(r + 1)..(seam + r + 1).min(len));
    }
    idx.extend((0..20_000u64).map(|i| (value(i, 5).abs() * len as f32) as usize % len));
    idx
}

/// Checks sampled outputs of a 1D result; returns (points checked, max error, failures).
pub fn spot_check_1d(got: ArrayView1<f32>, n: ArrayView1<f32>, m: ArrayView1<f32>) -> (usize, f64, usize) {
    let idx = sample_1d(n.len(), m.len() / 2);
    let (mut max_err, mut bad) = (0.0f64, 0);
    for &i in &idx {
        let (want, abs) = conv1d_at(n, m, i);
        let err = (got[i] as f64 - want).abs();
        max_err = max_err.max(err);
        bad += usize::from(err > tolerance(abs, m.len()));
    }
    (idx.len(), max_err, bad)
}

/// Checks sampled outputs of a 2D result: the whole border band of width r+4, rows and
/// columns at tile seams, and pseudo-random points; returns (checked, max error, failures).
pub fn spot_check_2d(got: ArrayView2<f32>, n: ArrayView2<f32>, m: ArrayView2<f32>) -> (usize, f64, usize) {
    let (h, w) = n.dim();
    let band = (m.nrows() / 2 + 4).min(h).min(w);
    let mut pts: Vec<(usize, usize)> = Vec::new();
    for y in 0..h {
        for x in (0..band).chain(w - band..w) {
            pts.push((y, x));
        }
    }
    for x in 0..w {
        for y in (0..band).chain(h - band..h) {
            pts.push((y, x));
        }
    }
    for i in 0..50_000u64 {
        let y = (value(i, 6).abs() * h as f32) as usize % h;
        let x = (value(i, 7).abs() * w as f32) as usize % w;
        pts.push((y, x));
        // The same point's neighbours across a 128-wide, 32-tall tile seam.
        pts.push((y, (x / 128 * 128 + 127).min(w - 1)));
        pts.push(((y / 32 * 32 + 31).min(h - 1), x));
    }
    let (mut max_err, mut bad) = (0.0f64, 0);
    for &(y, x) in &pts {
        let (want, abs) = conv2d_at(n, m, y, x);
        let err = (got[[y, x]] as f64 - want).abs();
        max_err = max_err.max(err);
        bad += usize::from(err > tolerance(abs, m.len()));
    }
    (pts.len(), max_err, bad)
}
