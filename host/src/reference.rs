//! The CPU ground truth: plain loops on ndarray, the definitions, no tricks. One
//! implementation for 1, 2 and 3 dimensions (an array is seen as `(depth, height,
//! width)` with leading axes of length 1).
//!
//! `correlate`: `P[i] = Σ_j N[i - r + j] · M[j]` along every axis (no mask flip), ghost
//! cells by [`Mode`]; `convolve` flips the mask first. Sums are taken in f64 so the
//! reference is more precise than any f32 kernel it judges. The ghost-cell rules are
//! written here as the definitions read (reflect about the edges until inside), apart
//! from the device's modular formulas (`layout::mode::map_index`).
use crate::Mode;
use ndarray::{Array, Array3, ArrayView, ArrayView3, Dimension, Ix3};

/// Where coordinate `i` of an axis of length `n` reads under `mode`: `Some(index)`, or
/// `None` for a ghost cell that takes the fill value (zero, constant).
pub fn source_index(i: isize, n: usize, mode: Mode) -> Option<usize> {
    let n = n as isize;
    if (0..n).contains(&i) {
        return Some(i as usize);
    }
    let mut i = i;
    match mode {
        Mode::Zero | Mode::Constant(_) => return None,
        Mode::Nearest => i = i.clamp(0, n - 1),
        Mode::Wrap => i = i.rem_euclid(n),
        // d c b a | a b c d | d c b a: reflect about the outer edge of the end cells.
        Mode::Reflect => {
            while !(0..n).contains(&i) {
                i = if i < 0 { -i - 1 } else { 2 * n - 1 - i };
            }
        }
        // d c b | a b c d | c b a: reflect about the end cells themselves.
        Mode::Mirror if n == 1 => i = 0,
        Mode::Mirror => {
            while !(0..n).contains(&i) {
                i = if i < 0 { -i } else { 2 * (n - 1) - i };
            }
        }
    }
    Some(i as usize)
}

/// An array as `(depth, height, width)`, leading axes of length 1 added.
fn as_3d<D: Dimension>(a: &ArrayView<f32, D>) -> Array3<f32> {
    let s = a.shape();
    let mut dims = [1usize; 3];
    dims[3 - s.len()..].copy_from_slice(s);
    Array3::from_shape_vec((dims[0], dims[1], dims[2]), a.iter().copied().collect()).expect("same number of elements")
}

/// Where the `k = 2r+1` taps around output `o` of an axis of length `n` read.
fn sources(o: usize, n: usize, k: usize, mode: Mode) -> Vec<Option<usize>> {
    let r = (k / 2) as isize;
    (0..k as isize)
        .map(|t| source_index(o as isize - r + t, n, mode))
        .collect()
}

/// [`correlate`] and [`correlate_abs`] in one pass (both summed in f64), the shape of
/// `n`: a check that needs both computes the sums once.
pub fn correlate_with_abs<D: Dimension>(
    n: ArrayView<f32, D>,
    m: ArrayView<f32, D>,
    mode: Mode,
) -> (Array<f32, D>, Array<f32, D>) {
    assert_eq!(n.ndim(), m.ndim(), "mask and input have the same number of axes");
    assert!(m.shape().iter().all(|k| k % 2 == 1), "odd mask sides");
    let (n3, m3) = (as_3d(&n), as_3d(&m));
    let ((d, h, w), (kd, kh, kw)) = (n3.dim(), m3.dim());
    let fill = mode.fill() as f64;
    let mut out = Vec::with_capacity(n3.len());
    let mut abs = Vec::with_capacity(n3.len());
    for z in 0..d {
        let zs = sources(z, d, kd, mode);
        for y in 0..h {
            let ys = sources(y, h, kh, mode);
            for x in 0..w {
                let xs = sources(x, w, kw, mode);
                let (mut acc, mut sum) = (0.0f64, 0.0f64);
                for (fz, sz) in zs.iter().enumerate() {
                    for (fy, sy) in ys.iter().enumerate() {
                        for (fx, sx) in xs.iter().enumerate() {
                            let v = match (sz, sy, sx) {
                                (Some(z), Some(y), Some(x)) => n3[[*z, *y, *x]] as f64,
                                _ => fill, // a ghost cell along any axis (zero, constant)
                            };
                            let t = v * m3[[fz, fy, fx]] as f64;
                            acc += t;
                            sum += t.abs();
                        }
                    }
                }
                out.push(acc as f32);
                abs.push(sum as f32);
            }
        }
    }
    let shape = n.raw_dim();
    (
        Array::from_shape_vec(shape.clone(), out).expect("shape"),
        Array::from_shape_vec(shape, abs).expect("shape"),
    )
}

/// Correlation of `n` with the odd mask `m` (same number of axes), ghost cells by `mode`.
pub fn correlate<D: Dimension>(n: ArrayView<f32, D>, m: ArrayView<f32, D>, mode: Mode) -> Array<f32, D> {
    correlate_with_abs(n, m, mode).0
}

/// Convolution: `m` flipped along every axis, then [`correlate`].
pub fn convolve<D: Dimension>(n: ArrayView<f32, D>, m: ArrayView<f32, D>, mode: Mode) -> Array<f32, D> {
    let mut flipped = m.to_owned();
    for axis in 0..flipped.ndim() {
        flipped.invert_axis(ndarray::Axis(axis));
    }
    correlate(n, flipped.view(), mode)
}

/// The textbook's convolution: [`correlate`] with ghost cells 0.
pub fn conv<D: Dimension>(n: ArrayView<f32, D>, m: ArrayView<f32, D>) -> Array<f32, D> {
    correlate(n, m, Mode::Zero)
}

/// For each output of [`correlate`], the sum of its terms' magnitudes `Σ|N·M|` (ghost
/// cells counted with the fill value): what scales that output's [`tolerance`].
pub fn correlate_abs<D: Dimension>(n: ArrayView<f32, D>, m: ArrayView<f32, D>, mode: Mode) -> Array<f32, D> {
    correlate_with_abs(n, m, mode).1
}

/// One output `P[at]` of [`correlate`] and its `Σ|terms|`, in f64, without computing the
/// rest: lets benchmarks spot-check outputs of huge inputs. `at` is outermost-first.
pub fn correlate_at<D: Dimension>(n: ArrayView<f32, D>, m: ArrayView<f32, D>, mode: Mode, at: &[usize]) -> (f64, f64) {
    let (n, m) = (n.into_dyn(), m.into_dyn());
    let nd = n.ndim();
    assert_eq!(at.len(), nd);
    let (ms, ns) = (m.shape(), n.shape());
    let (mut acc, mut abs) = (0.0f64, 0.0f64);
    let mut tap = vec![0usize; nd];
    let count: usize = ms.iter().product();
    for t in 0..count {
        // The t-th tap, row-major.
        let mut rest = t;
        for a in (0..nd).rev() {
            tap[a] = rest % ms[a];
            rest /= ms[a];
        }
        let mut src = Vec::with_capacity(nd);
        for a in 0..nd {
            src.push(source_index(
                at[a] as isize - (ms[a] / 2) as isize + tap[a] as isize,
                ns[a],
                mode,
            ));
        }
        let v = if src.iter().all(Option::is_some) {
            let idx: Vec<usize> = src.into_iter().map(Option::unwrap).collect();
            n[idx.as_slice()] as f64
        } else {
            mode.fill() as f64
        };
        let term = v * m[tap.as_slice()] as f64;
        acc += term;
        abs += term.abs();
    }
    (acc, abs)
}

/// Every channel of a `(height, width, channels)` image correlated with the 2D `mask`,
/// summed in f64, stored as the pixel type (u8: rounded to nearest, ties to even, and
/// saturated).
pub fn correlate_image<T: crate::Pixel>(
    img: ndarray::ArrayView3<T>,
    mask: ndarray::ArrayView2<f32>,
    mode: Mode,
) -> Array3<T> {
    let f = img.mapv(T::to_f32);
    correlate(f.view(), mask.insert_axis(ndarray::Axis(2)), mode).mapv(T::from_f32)
}

/// [`correlate_image`] with the mask flipped along both axes.
pub fn convolve_image<T: crate::Pixel>(
    img: ndarray::ArrayView3<T>,
    mask: ndarray::ArrayView2<f32>,
    mode: Mode,
) -> Array3<T> {
    let f = img.mapv(T::to_f32);
    convolve(f.view(), mask.insert_axis(ndarray::Axis(2)), mode).mapv(T::from_f32)
}

/// Per-element error bound for comparing an f32 kernel that sums `taps` products against
/// this (f64) reference: `(4 + √taps)·ε·Σ|terms|`. Rounding errors of an f32 sum grow like
/// a random walk (√taps), far below the worst case (taps·ε), which at large masks would be
/// too loose to catch a missing term; the 4 covers short sums and the final rounding.
pub fn tolerance(abs_sum: f64, taps: usize) -> f64 {
    abs_sum * (f32::EPSILON as f64) * (4.0 + (taps as f64).sqrt()) + 1e-30
}

/// [`conv`] of a signal (1D name kept).
pub fn conv1d(n: ndarray::ArrayView1<f32>, m: ndarray::ArrayView1<f32>) -> ndarray::Array1<f32> {
    conv(n, m)
}
/// [`conv`] of an image (2D name kept).
pub fn conv2d(n: ndarray::ArrayView2<f32>, m: ndarray::ArrayView2<f32>) -> ndarray::Array2<f32> {
    conv(n, m)
}
/// [`conv`] of a volume (3D name kept).
pub fn conv3d(n: ArrayView3<f32>, m: ArrayView3<f32>) -> Array<f32, Ix3> {
    conv(n, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array1};

    #[test]
    fn textbook_1d_example() {
        let n = Array1::range(1.0, 8.0, 1.0);
        let p = conv(n.view(), array![3.0, 4.0, 5.0, 4.0, 3.0].view());
        assert_eq!((p[1], p[2], p[3]), (38.0, 57.0, 76.0));
    }

    #[test]
    fn identity_mask_is_identity_in_every_mode() {
        let n = array![[1.0, 2.0], [3.0, 4.0f32]];
        let m = array![[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0f32]];
        for mode in Mode::ALL {
            assert_eq!(correlate(n.view(), m.view(), mode), n, "{mode:?}");
        }
    }

    #[test]
    fn the_pointwise_form_agrees_with_the_whole_array() {
        let n = Array::from_shape_fn((3, 4, 5), |(z, y, x)| (z * 20 + y * 5 + x) as f32 * 0.25 - 3.0);
        let m = Array::from_shape_fn((3, 1, 5), |(z, y, x)| (z + y + x) as f32 - 2.5);
        for mode in Mode::ALL {
            let (all, abs) = correlate_with_abs(n.view(), m.view(), mode);
            for ((z, y, x), &v) in all.indexed_iter() {
                let (p, s) = correlate_at(n.view(), m.view(), mode, &[z, y, x]);
                assert_eq!(v, p as f32, "{mode:?} at {z},{y},{x}");
                assert_eq!(abs[[z, y, x]], s as f32);
            }
        }
    }

    #[test]
    fn convolve_flips_the_mask() {
        let n = array![0.0f32, 0.0, 1.0, 0.0, 0.0];
        let m = array![1.0f32, 2.0, 3.0];
        // Correlating an impulse gives the mask reversed; convolving gives it as it is.
        assert_eq!(
            correlate(n.view(), m.view(), Mode::Zero),
            array![0.0, 3.0, 2.0, 1.0, 0.0]
        );
        assert_eq!(
            convolve(n.view(), m.view(), Mode::Zero),
            array![0.0, 1.0, 2.0, 3.0, 0.0]
        );
    }
}
