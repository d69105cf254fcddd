//! The CPU ground truth: plain loops on ndarray, the textbook definition, no tricks.
//!
//! `P[i] = Σ_j N[i - r + j] · M[j]` (no mask flip), ghost cells are 0. Sums are taken in
//! f64 so the reference is more precise than any f32 kernel it judges.
use ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, ArrayView3};

/// 1D convolution of `n` with an odd-length mask `m`.
pub fn conv1d(n: ArrayView1<f32>, m: ArrayView1<f32>) -> Array1<f32> {
    Array1::from_shape_fn(n.len(), |i| conv1d_at(n, m, i).0 as f32)
}

/// One 1D output `P[i]` and the sum of its terms' magnitudes (which scales its
/// [`tolerance`]), in f64: lets benchmarks spot-check outputs of huge inputs.
pub fn conv1d_at(n: ArrayView1<f32>, m: ArrayView1<f32>, i: usize) -> (f64, f64) {
    let r = m.len() as isize / 2;
    let len = n.len() as isize;
    let (mut acc, mut abs) = (0.0f64, 0.0f64);
    for j in 0..m.len() as isize {
        let k = i as isize - r + j;
        if (0..len).contains(&k) {
            let t = n[k as usize] as f64 * m[j as usize] as f64;
            acc += t;
            abs += t.abs();
        }
    }
    (acc, abs)
}

/// 2D convolution of a (height, width) image with a square odd mask.
pub fn conv2d(n: ArrayView2<f32>, m: ArrayView2<f32>) -> Array2<f32> {
    Array2::from_shape_fn(n.dim(), |(y, x)| conv2d_at(n, m, y, x).0 as f32)
}

/// One 2D output `P[y][x]` and the sum of its terms' magnitudes, in f64.
pub fn conv2d_at(n: ArrayView2<f32>, m: ArrayView2<f32>, y: usize, x: usize) -> (f64, f64) {
    let (h, w) = (n.nrows() as isize, n.ncols() as isize);
    let r = m.nrows() as isize / 2;
    let (mut acc, mut abs) = (0.0f64, 0.0f64);
    for fy in 0..m.nrows() as isize {
        for fx in 0..m.ncols() as isize {
            let (iy, ix) = (y as isize - r + fy, x as isize - r + fx);
            if (0..h).contains(&iy) && (0..w).contains(&ix) {
                let t = n[[iy as usize, ix as usize]] as f64 * m[[fy as usize, fx as usize]] as f64;
                acc += t;
                abs += t.abs();
            }
        }
    }
    (acc, abs)
}

/// 3D convolution of a (depth, height, width) volume with a cubic odd mask.
pub fn conv3d(n: ArrayView3<f32>, m: ArrayView3<f32>) -> Array3<f32> {
    let (d, h, w) = n.dim();
    let (d, h, w) = (d as isize, h as isize, w as isize);
    let r = m.dim().0 as isize / 2;
    let k = 2 * r + 1;
    Array3::from_shape_fn(n.dim(), |(z, y, x)| {
        let mut acc = 0.0f64;
        for fz in 0..k {
            for fy in 0..k {
                for fx in 0..k {
                    let (iz, iy, ix) = (z as isize - r + fz, y as isize - r + fy, x as isize - r + fx);
                    if (0..d).contains(&iz) && (0..h).contains(&iy) && (0..w).contains(&ix) {
                        acc += n[[iz as usize, iy as usize, ix as usize]] as f64
                            * m[[fz as usize, fy as usize, fx as usize]] as f64;
                    }
                }
            }
        }
        acc as f32
    })
}

/// Per-element error bound for comparing an f32 kernel that sums `taps` products against
/// this (f64) reference: `(4 + √taps)·ε·Σ|terms|`. Rounding errors of an f32 sum grow like
/// a random walk (√taps), far below the worst case (taps·ε), which at large masks would be
/// too loose to catch a missing term; the 4 covers short sums and the final rounding.
pub fn tolerance(abs_sum: f64, taps: usize) -> f64 {
    abs_sum * (f32::EPSILON as f64) * (4.0 + (taps as f64).sqrt()) + 1e-30
}

/// 1D: the sum of |N[k]·M[j]| for each output: scales the tolerance of that output.
pub fn conv1d_abs(n: ArrayView1<f32>, m: ArrayView1<f32>) -> Array1<f32> {
    conv1d(n.mapv(f32::abs).view(), m.mapv(f32::abs).view())
}

/// 2D: the sum of |terms| for each output.
pub fn conv2d_abs(n: ArrayView2<f32>, m: ArrayView2<f32>) -> Array2<f32> {
    conv2d(n.mapv(f32::abs).view(), m.mapv(f32::abs).view())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array};

    #[test]
    fn textbook_1d_example() {
        let n = Array::range(1.0, 8.0, 1.0);
        let p = conv1d(n.view(), array![3.0, 4.0, 5.0, 4.0, 3.0].view());
        assert_eq!((p[1], p[2], p[3]), (38.0, 57.0, 76.0));
    }

    #[test]
    fn identity_mask_is_identity() {
        let n = array![[1.0, 2.0], [3.0, 4.0f32]];
        let m = array![[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0f32]];
        assert_eq!(conv2d(n.view(), m.view()), n);
    }
}
