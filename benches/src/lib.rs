//! Shared pieces of the benchmarks: the issues' benchmark cases (1D, 2D and 3D in one
//! list), deterministic inputs, and spot checks of huge outputs against the CPU
//! reference. Arrays are `ArrayD`, so one loop serves every dimension.
use gpuconv::reference::{correlate_at, tolerance};
use gpuconv::Mode;
use ndarray::{ArrayD, ArrayViewD, IxDyn};

/// A shape as the reports write it: `8192x8192`, `268435456`.
pub fn size(shape: &[usize]) -> String {
    shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x")
}

/// One benchmark case: an array shape and the radii to time on it.
#[derive(Clone, Debug)]
pub struct Case {
    /// Shape, outermost axis first.
    pub shape: Vec<usize>,
    /// Mask radii (the same on every axis).
    pub radii: Vec<usize>,
}

impl Case {
    /// Number of axes.
    pub fn dim(&self) -> usize {
        self.shape.len()
    }
    /// `8192x8192`-style size.
    pub fn size(&self) -> String {
        size(&self.shape)
    }
    /// The bench and report id of radius `r`: `conv2d_8192x8192_r3`.
    pub fn id(&self, r: usize) -> String {
        format!("conv{}d_{}_r{r}", self.dim(), self.size())
    }
    /// Elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    /// Never true.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The roofline targets: 2D 8192² r = 1..4, 1D 2^28 r = 2, 4, 16, 3D 512³ r = 1..3.
/// `scale` divides every side (criterion's quick runs use 2).
pub fn cases(scale: usize) -> Vec<Case> {
    vec![
        Case {
            shape: vec![8192 / scale, 8192 / scale],
            radii: vec![1, 2, 3, 4],
        },
        Case {
            shape: vec![(1 << 28) / scale / scale],
            radii: vec![2, 4, 16],
        },
        Case {
            shape: vec![512 / scale; 3],
            radii: vec![1, 2, 3],
        },
    ]
}

/// Deterministic values in [-1, 1): a hash of the index, no RNG state to carry.
pub fn value(i: u64, seed: u64) -> f32 {
    let x = (i ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
        .rotate_left(31)
        .wrapping_mul(0x94D0_49BB_1331_11EB);
    (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

/// A benchmark input of shape `shape`.
pub fn input(shape: &[usize]) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n as u64).map(|i| value(i, 2)).collect()).expect("shape")
}

/// A mask of radius `r` on each of `dim` axes (taps sum to about 1, no tap zero).
pub fn mask(dim: usize, r: usize) -> ArrayD<f32> {
    let k = 2 * r + 1;
    let taps = k.pow(dim as u32);
    ArrayD::from_shape_vec(
        IxDyn(&vec![k; dim]),
        (0..taps as u64).map(|j| (1.5 + value(j, 4)) / taps as f32).collect(),
    )
    .expect("shape")
}

/// Tile sides along x, y, z that the kernels' seams fall on (the fast kernels' 128-wide,
/// 16/32-row and 64-plane tiles, the textbook 1024-, 32- and 8-cell ones).
const SEAMS: [usize; 3] = [128, 16, 64];

/// Output positions worth checking: for each point and each axis, near the low edge,
/// near the high edge, next to a tile seam, or anywhere (hashing picks which), so faces,
/// edges, corners and seams are all covered; `count` points.
pub fn sample_points(shape: &[usize], r: usize, count: usize) -> Vec<Vec<usize>> {
    let band = r + 4;
    (0..count as u64)
        .map(|i| {
            shape
                .iter()
                .rev()
                .enumerate()
                .map(|(axis, &n)| {
                    let h = (value(i, 10 + axis as u64).abs() * (1 << 22) as f32) as usize;
                    let pick = h % 4;
                    let off = h / 4;
                    match pick {
                        0 => off % band.min(n),
                        1 => n - 1 - off % band.min(n),
                        2 => {
                            let seam = SEAMS[axis.min(2)];
                            let at = (off % n.div_ceil(seam)) * seam;
                            (at + off % (2 * r + 2)).saturating_sub(r + 1).min(n - 1)
                        }
                        _ => off % n,
                    }
                })
                .rev()
                .collect()
        })
        .collect()
}

/// Checks sampled outputs of a result against the f64 reference; returns (points
/// checked, max error, failures).
pub fn spot_check(got: ArrayViewD<f32>, n: ArrayViewD<f32>, m: ArrayViewD<f32>, mode: Mode) -> (usize, f64, usize) {
    let r = m.shape()[0] / 2;
    let count = match n.ndim() {
        1 => 20_000,
        2 => 50_000,
        _ => 20_000,
    };
    let pts = sample_points(n.shape(), r, count);
    let (mut max_err, mut bad) = (0.0f64, 0);
    for p in &pts {
        let (want, abs) = correlate_at(n.view(), m.view(), mode, p);
        let err = (got[p.as_slice()] as f64 - want).abs();
        max_err = max_err.max(err);
        let within = err <= tolerance(abs, m.len()); // false for NaN
        bad += usize::from(!within);
    }
    (pts.len(), max_err, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_points_cover_edges_seams_and_stay_inside() {
        let shape = [512, 300, 1000];
        let pts = sample_points(&shape, 3, 5000);
        assert!(pts.iter().all(|p| p.iter().zip(shape).all(|(&i, n)| i < n)));
        for axis in 0..3 {
            assert!(pts.iter().any(|p| p[axis] == 0), "low edge of axis {axis}");
            assert!(
                pts.iter().any(|p| p[axis] == shape[axis] - 1),
                "high edge of axis {axis}"
            );
        }
        // Around the 128-wide seams of x (the last axis).
        assert!(pts.iter().any(|p| p[2] % 128 == 127) && pts.iter().any(|p| p[2] % 128 == 0 && p[2] > 0));
    }

    #[test]
    fn spot_check_catches_a_wrong_output() {
        let n = input(&[40, 50]);
        let m = mask(2, 2);
        let mut got = gpuconv::reference::conv(n.view(), m.view());
        assert_eq!(spot_check(got.view(), n.view(), m.view(), Mode::Zero).2, 0);
        got.fill(0.5);
        assert!(spot_check(got.view(), n.view(), m.view(), Mode::Zero).2 > 0);
    }
}
