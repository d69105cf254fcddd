//! The worked examples of the textbook's chapter 7 ("Parallel Patterns: Convolution",
//! /work/shared/seeds/000_*.txt, also 001_*.txt) and a 3D example worked by hand, on the
//! CPU reference and on every GPU variant. All values are small integers: every product and partial sum is an integer
//! below 2^24, exact in f32 in any summation order and with or without FMA, so the
//! GPU results must be *exactly* equal.
use gpuconv::{reference, Variant};
use gpuconv_tests::{gpu, takes_rank1_only};
use ndarray::{array, Array1, Array2, Array3};

/// Figures 7.1-7.3: N = 1..7, M = [3, 4, 5, 4, 3].
fn fig_7_1() -> (Array1<f32>, Array1<f32>) {
    (
        array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        array![3.0, 4.0, 5.0, 4.0, 3.0],
    )
}

/// The whole output of Fig. 7.1's example, by hand (ghost cells 0, Fig. 7.3):
/// P[0] = 0·3 + 0·4 + 1·5 + 2·4 + 3·3 = 22 (the chapter leaves it as an exercise)
/// P[1] = 0·3 + 1·4 + 2·5 + 3·4 + 4·3 = 38 (Fig. 7.3)
/// P[2] = 1·3 + 2·4 + 3·5 + 4·4 + 5·3 = 57 (Fig. 7.1)
/// P[3] = 2·3 + 3·4 + 4·5 + 5·4 + 6·3 = 76 (Fig. 7.2)
/// P[4] = 3·3 + 4·4 + 5·5 + 6·4 + 7·3 = 95
/// P[5] = 4·3 + 5·4 + 6·5 + 7·4 + 0·3 = 90
/// P[6] = 5·3 + 6·4 + 7·5 + 0·4 + 0·3 = 74
const FIG_7_1_P: [f32; 7] = [22.0, 38.0, 57.0, 76.0, 95.0, 90.0, 74.0];

/// The crate docs' example (host/src/lib.rs): N = [4, 1, 3, 2, 3], M = [2, 1, 4]:
/// P = [0·2+4·1+1·4, 4·2+1·1+3·4, 1·2+3·1+2·4, 3·2+2·1+3·4, 2·2+3·1+0·4] = [8, 21, 13, 20, 7].
fn doc_example() -> (Array1<f32>, Array1<f32>, Array1<f32>) {
    (
        array![4.0, 1.0, 3.0, 2.0, 3.0],
        array![2.0, 1.0, 4.0],
        array![8.0, 21.0, 13.0, 20.0, 7.0],
    )
}

/// Fig. 7.4 (2D convolution example: P[2][2] = 321) and Fig. 7.5 (boundary: P[1][0]).
///
/// The seeds' text of Fig. 7.4 (000_77f2d3aa47b0f2bb.txt, the equation for P_{2,2} under
/// "Figure 7.4 A 2D convolution example"; the same in 001_557617f6497c4805.txt) spells out
/// N[0..5][0..5] and the whole 5x5 M. The image is 7x7 in the printed figure; its cells
/// outside rows/cols 0..5 are not in the seeds' text and are filled in here from the
/// printed figure. No hand-computed value below depends on them (P[2][2] and P[1][0] read
/// only N[0..5][0..5]); the whole-output checks compare GPU against the reference.
fn fig_7_4() -> (Array2<f32>, Array2<f32>) {
    let n = array![
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        [4.0, 5.0, 6.0, 7.0, 8.0, 5.0, 6.0],
        [5.0, 6.0, 7.0, 8.0, 5.0, 6.0, 7.0],
        [6.0, 7.0, 8.0, 9.0, 0.0, 1.0, 2.0],
        [7.0, 8.0, 9.0, 0.0, 1.0, 2.0, 3.0],
    ];
    let m = array![
        [1.0, 2.0, 3.0, 2.0, 1.0],
        [2.0, 3.0, 4.0, 3.0, 2.0],
        [3.0, 4.0, 5.0, 4.0, 3.0],
        [2.0, 3.0, 4.0, 3.0, 2.0],
        [1.0, 2.0, 3.0, 2.0, 1.0],
    ];
    (n, m)
}

/// P[2][2] of Fig. 7.4 as the text sums it: the 5x5 product array row by row,
/// (1+4+9+8+5) + (4+9+16+15+12) + (9+16+25+24+21) + (8+15+24+21+16) + (5+12+21+16+5)
/// = 27 + 56 + 95 + 84 + 59 = 321.
const FIG_7_4_P22: f32 = 321.0;
/// P[1][0] of Fig. 7.5 (two ghost columns left, one ghost row above): the valid part is
/// N[0..4][0..3] times M[1..5][2..5]:
/// (1·4+2·3+3·2) + (2·5+3·4+4·3) + (3·4+4·3+5·2) + (4·3+5·2+6·1) = 16 + 34 + 34 + 28 = 112.
const FIG_7_5_P10: f32 = 112.0;

/// A 3D example worked by hand (the book's chapter asks for 3D kernels; MP-4 builds one).
/// N is 3x3x3 with `N[z][y][x] = 9z + 3y + x + 1` (1..27, z the outermost axis); M is
/// 3x3x3 and zero but for five taps:
///
/// ```text
/// M[0][1][1] = 1   (the plane before, centre)      M[1][0][1] = 4   (the row above)
/// M[1][1][1] = 2   (the centre)                    M[1][1][2] = 5   (the next column)
/// M[2][1][1] = 3   (the plane after, centre)
/// ```
///
/// so `P[z][y][x] = 1·N[z-1][y][x] + 2·N[z][y][x] + 3·N[z+1][y][x] + 4·N[z][y-1][x] +
/// 5·N[z][y][x+1]`, ghost cells 0.
fn worked_3d() -> (Array3<f32>, Array3<f32>) {
    let n = Array3::from_shape_fn((3, 3, 3), |(z, y, x)| (9 * z + 3 * y + x + 1) as f32);
    let mut m = Array3::zeros((3, 3, 3));
    for ((z, y, x), v) in [
        ((0, 1, 1), 1.0),
        ((1, 1, 1), 2.0),
        ((2, 1, 1), 3.0),
        ((1, 0, 1), 4.0),
        ((1, 1, 2), 5.0),
    ] {
        m[[z, y, x]] = v;
    }
    (n, m)
}

/// The hand-derived outputs of [`worked_3d`]:
///
/// - `P[1][1][1]`: N[0][1][1] = 5, N[1][1][1] = 14, N[2][1][1] = 23, N[1][0][1] = 11,
///   N[1][1][2] = 15, so 1·5 + 2·14 + 3·23 + 4·11 + 5·15 = 5 + 28 + 69 + 44 + 75 = 221.
/// - `P[0][0][0]`: the plane before and the row above are ghosts; N[0][0][0] = 1,
///   N[1][0][0] = 10, N[0][0][1] = 2, so 2·1 + 3·10 + 5·2 = 42.
/// - `P[2][2][2]`: the plane after and the next column are ghosts; N[1][2][2] = 18,
///   N[2][2][2] = 27, N[2][1][2] = 24, so 1·18 + 2·27 + 4·24 = 18 + 54 + 96 = 168.
/// - `P[0][2][0]`: N[0][2][0] = 7, N[1][2][0] = 16, N[0][1][0] = 4, N[0][2][1] = 8, so
///   2·7 + 3·16 + 4·4 + 5·8 = 14 + 48 + 16 + 40 = 118.
const WORKED_3D: [([usize; 3], f32); 4] = [
    ([1, 1, 1], 221.0),
    ([0, 0, 0], 42.0),
    ([2, 2, 2], 168.0),
    ([0, 2, 0], 118.0),
];

/// Every variant of a dimension that takes the book's masks: all but the separable
/// family, which takes only rank-1 masks (the book's are not; `separable_refuses_the_books_mask`).
fn all_of(dim: usize) -> impl Iterator<Item = Variant> {
    Variant::all_of_dim(dim)
        .filter(|&v| !takes_rank1_only(v))
        .chain([Variant::Auto])
}

// ---------------------------------------------------------------- CPU reference (always)

#[test]
fn reference_fig_7_1_to_7_3() {
    let (n, m) = fig_7_1();
    let p = reference::conv(n.view(), m.view());
    assert_eq!((p[1], p[2], p[3]), (38.0, 57.0, 76.0), "Figs. 7.3, 7.1, 7.2");
    assert_eq!(p.to_vec(), FIG_7_1_P.to_vec(), "whole output, by hand");
}

#[test]
fn reference_doc_example() {
    let (n, m, want) = doc_example();
    assert_eq!(reference::conv(n.view(), m.view()), want);
}

#[test]
fn reference_fig_7_4_and_7_5() {
    let (n, m) = fig_7_4();
    let p = reference::conv(n.view(), m.view());
    assert_eq!(p[[2, 2]], FIG_7_4_P22, "Fig. 7.4");
    assert_eq!(p[[1, 0]], FIG_7_5_P10, "Fig. 7.5");
    // The product array of Fig. 7.4, summed independently of the reference's loops.
    let direct: f32 = (0..5)
        .flat_map(|i| (0..5).map(move |j| (i, j)))
        .map(|(i, j)| n[[i, j]] * m[[i, j]])
        .sum();
    assert_eq!(direct, FIG_7_4_P22);
}

#[test]
fn reference_worked_3d_example() {
    let (n, m) = worked_3d();
    let p = reference::conv(n.view(), m.view());
    for (at, want) in WORKED_3D {
        assert_eq!(p[at], want, "P{at:?}");
    }
}

// ---------------------------------------------------------------- every GPU variant

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn gpu_fig_7_1_to_7_3_every_variant() {
    let gpu = gpu();
    let (n, m) = fig_7_1();
    for v in all_of(1) {
        let p = gpu.conv(n.view(), m.view(), v).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!((p[1], p[2], p[3]), (38.0, 57.0, 76.0), "{v}: P[1], P[2], P[3]");
        assert_eq!(p.to_vec(), FIG_7_1_P.to_vec(), "{v}: whole output");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn gpu_doc_example_every_variant() {
    let gpu = gpu();
    let (n, m, want) = doc_example();
    for v in all_of(1) {
        let p = gpu.conv1d(n.view(), m.view(), v).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(p, want, "{v}");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn separable_refuses_the_books_mask() {
    let gpu = gpu();
    let (n, m) = fig_7_4();
    for v in Variant::all_of_dim(2).filter(|&v| takes_rank1_only(v)) {
        let r = gpu.conv2d(n.view(), m.view(), v);
        assert!(matches!(r, Err(gpuconv::Error::NotSeparable { .. })), "{v}: {r:?}");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn gpu_fig_7_4_every_variant() {
    let gpu = gpu();
    let (n, m) = fig_7_4();
    let want = reference::conv(n.view(), m.view());
    for v in all_of(2) {
        let p = gpu.conv2d(n.view(), m.view(), v).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(p[[2, 2]], FIG_7_4_P22, "{v}: Fig. 7.4 P[2][2]");
        assert_eq!(p[[1, 0]], FIG_7_5_P10, "{v}: Fig. 7.5 P[1][0]");
        assert_eq!(p, want, "{v}: whole 7x7 output (exact)");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn gpu_worked_3d_example_every_variant() {
    let gpu = gpu();
    let (n, m) = worked_3d();
    let want = reference::conv(n.view(), m.view());
    for v in all_of(3) {
        let p = gpu.conv3d(n.view(), m.view(), v).unwrap_or_else(|e| panic!("{v}: {e}"));
        for (at, value) in WORKED_3D {
            assert_eq!(p[at], value, "{v}: P{at:?}");
        }
        assert_eq!(p, want, "{v}: whole 3x3x3 output (exact)");
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn gpu_textbook_examples_through_device_api() {
    let gpu = gpu();
    let (n, m) = fig_7_1();
    let dn = gpu.upload(n.view()).expect("upload");
    let mut dp = gpu.alloc(n.len()).expect("alloc");
    for v in all_of(1) {
        gpu.conv_device(&dn, m.view(), v, &mut dp)
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(dp.to_host().expect("download").to_vec(), FIG_7_1_P.to_vec(), "{v}");
    }
    let (n, m) = fig_7_4();
    let want = reference::conv(n.view(), m.view());
    let dn = gpu.upload(n.view()).expect("upload");
    let mut dp = gpu.alloc(n.dim()).expect("alloc");
    for v in all_of(2) {
        gpu.conv_device(&dn, m.view(), v, &mut dp)
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(dp.to_host().expect("download"), want, "{v}");
    }
    let (n, m) = worked_3d();
    let want = reference::conv(n.view(), m.view());
    let dn = gpu.upload(n.view()).expect("upload");
    let mut dp = gpu.alloc(n.dim()).expect("alloc");
    for v in all_of(3) {
        gpu.conv_device(&dn, m.view(), v, &mut dp)
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(dp.to_host().expect("download"), want, "{v}");
    }
}
