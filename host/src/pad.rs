//! Padding an array by its ghost cells (`numpy.pad` for the six [`Mode`]s): how `Auto`
//! runs a mode on host arrays where no kernel that implements the mode takes the mask
//! (2D general masks past radius 8, 3D past 3, 1D past 16). The padded array under zero
//! ghost cells reads, at every output of the original, exactly the cells the mode
//! would: the textbook kernels, which keep the book's zero ghost cells, run it, and the
//! result is cropped back.
//!
//! The mapping is the device's own (`layout::mode::map_index`), so a padded array holds
//! what a fast kernel would read; the tests check it against the reference's rules.
use crate::device_array::{check_len, elements, MAX_ELEMENTS};
use crate::error::{Error, Result};
use crate::Mode;
use layout::mode::map_index;
use ndarray::{s, Array, Array3, ArrayView, Axis, Dimension, IxDyn, Slice};

/// `a` with `pad[k]` ghost cells on both sides of axis `k` (outermost axis first, one per
/// axis of `a`), each holding what `mode` reads there. Any strides; `a` is not modified.
/// Errors: [`Error::EmptyInput`] for an empty `a`, [`Error::TooLarge`] where the padded
/// array would pass 2^31 elements (what one call handles), [`Error::UnsupportedDimension`]
/// past 3 axes or with `pad` of another length.
pub fn pad<D: Dimension>(a: ArrayView<f32, D>, pad: &[usize], mode: Mode) -> Result<Array<f32, D>> {
    let nd = a.ndim();
    if !(1..=3).contains(&nd) || pad.len() != nd {
        return Err(Error::UnsupportedDimension {
            ndim: nd.max(pad.len()),
        });
    }
    if a.is_empty() {
        return Err(Error::EmptyInput);
    }
    let overflow = || Error::TooLarge {
        elements: usize::MAX,
        max: MAX_ELEMENTS,
    };
    let padded: Option<Vec<usize>> = (a.shape().iter().zip(pad))
        .map(|(&n, &p)| p.checked_mul(2).and_then(|p2| n.checked_add(p2)))
        .collect();
    let padded = padded.ok_or_else(overflow)?;
    // What one call handles, as an upload checks it.
    check_len(elements(&padded).ok_or_else(overflow)?)?;
    // Three axes, leading ones of length 1 (padded by 0): one loop for every dimension.
    let mut v = a.into_dyn();
    let mut p3 = [0usize; 3];
    p3[3 - nd..].copy_from_slice(pad);
    while v.ndim() < 3 {
        v.insert_axis_inplace(Axis(0));
    }
    let v = v.into_dimensionality::<ndarray::Ix3>().expect("three axes");
    let (d, h, w) = v.dim();
    let (pd, ph, pw) = (p3[0], p3[1], p3[2]);
    let fill = mode.fill();
    // Where padded coordinate `i` of an axis of `n` cells padded by `p` reads, or None
    // for a ghost cell that takes the fill value. Coordinates fit i32: fewer than 2^31
    // elements in all.
    let source = |i: usize, n: usize, p: usize| {
        let j = map_index(mode.code(), i as i32 - p as i32, n as i32);
        usize::try_from(j).ok()
    };
    let xs: Vec<Option<usize>> = (0..w + 2 * pw).map(|x| source(x, w, pw)).collect();
    let mut out = Array3::<f32>::from_elem((d + 2 * pd, h + 2 * ph, w + 2 * pw), fill);
    for (z, mut plane) in out.outer_iter_mut().enumerate() {
        let Some(sz) = source(z, d, pd) else { continue };
        for (y, mut row) in plane.outer_iter_mut().enumerate() {
            let Some(sy) = source(y, h, ph) else { continue };
            let src = v.slice(s![sz, sy, ..]);
            row.slice_mut(s![pw..pw + w]).assign(&src);
            for (x, at) in xs.iter().enumerate().filter(|(x, _)| *x < pw || *x >= pw + w) {
                if let Some(sx) = at {
                    row[x] = src[*sx];
                }
            }
        }
    }
    Ok(out
        .into_shape_with_order(IxDyn(&padded))
        .expect("same elements, standard order")
        .into_dimensionality::<D>()
        .expect("the input's dimension"))
}

/// The inverse of [`pad`]'s growth: the cells of `a` past `pad[k]` on both sides of axis
/// `k` (outermost first), as a new array.
pub fn crop<D: Dimension>(a: ArrayView<f32, D>, pad: &[usize]) -> Array<f32, D> {
    a.slice_each_axis(|ax| {
        let p = pad[ax.axis.index()];
        Slice::from(p..ax.len - p)
    })
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;
    use ndarray::{array, Array1, Array2, ArrayD};

    /// A deterministic array of `shape` with distinct values.
    fn ramp(shape: &[usize]) -> ArrayD<f32> {
        let n: usize = shape.iter().product();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|i| (i as f32) * 0.37 - 3.0).collect()).unwrap()
    }

    #[test]
    fn pads_each_mode_as_scipy_names_it() {
        let a = array![1.0f32, 2.0, 3.0, 4.0];
        let p = |mode| pad(a.view(), &[3], mode).unwrap().to_vec();
        assert_eq!(p(Mode::Zero), [0., 0., 0., 1., 2., 3., 4., 0., 0., 0.]);
        assert_eq!(p(Mode::Constant(9.0)), [9., 9., 9., 1., 2., 3., 4., 9., 9., 9.]);
        assert_eq!(p(Mode::Nearest), [1., 1., 1., 1., 2., 3., 4., 4., 4., 4.]);
        assert_eq!(p(Mode::Reflect), [3., 2., 1., 1., 2., 3., 4., 4., 3., 2.]);
        assert_eq!(p(Mode::Mirror), [4., 3., 2., 1., 2., 3., 4., 3., 2., 1.]);
        assert_eq!(p(Mode::Wrap), [2., 3., 4., 1., 2., 3., 4., 1., 2., 3.]);
    }

    #[test]
    fn every_padded_cell_reads_what_the_reference_reads() {
        // Pads wider than the axis (several periods), axes of 1, every dimension.
        for shape in [&[1usize][..], &[5], &[3, 1], &[2, 7], &[4, 3, 5], &[1, 2, 1]] {
            let a = ramp(shape);
            for pads in [[0usize, 1, 2], [3, 0, 1], [9, 7, 11]] {
                let pads = &pads[..shape.len()];
                for mode in Mode::ALL.into_iter().chain([Mode::Constant(-2.5)]) {
                    let p = pad(a.view(), pads, mode).unwrap();
                    for (ix, &got) in p.indexed_iter() {
                        let src: Option<Vec<usize>> = (0..shape.len())
                            .map(|k| reference::source_index(ix[k] as isize - pads[k] as isize, shape[k], mode))
                            .collect();
                        let want = src.map_or(mode.fill(), |s| a[IxDyn(&s)]);
                        assert_eq!(got, want, "{shape:?} pad {pads:?} {mode:?} at {ix:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn zero_ghost_cells_on_the_padded_array_give_the_mode() {
        // What Auto's host path computes, on the reference: pad, correlate with zero
        // ghost cells, crop; against the reference's own mode handling.
        let a = ramp(&[6, 4]).into_dimensionality::<ndarray::Ix2>().unwrap();
        let m = Array2::from_shape_fn((5, 9), |(i, j)| (i * 9 + j) as f32 * 0.1 - 1.0);
        for mode in Mode::ALL.into_iter().chain([Mode::Constant(3.0)]) {
            let padded = pad(a.view(), &[2, 4], mode).unwrap();
            let got = crop(
                reference::correlate(padded.view(), m.view(), Mode::Zero).view(),
                &[2, 4],
            );
            let want = reference::correlate(a.view(), m.view(), mode);
            for (g, w) in got.iter().zip(want.iter()) {
                assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{mode:?}: {got} vs {want}");
            }
            assert_eq!(got.dim(), a.dim());
        }
    }

    #[test]
    fn strided_views_pad_as_their_elements() {
        let base = Array2::from_shape_fn((5, 8), |(y, x)| (y * 8 + x) as f32);
        let v = base.slice(s![..;-2, 1..;3]);
        let dense = v.to_owned();
        for mode in Mode::ALL {
            assert_eq!(
                pad(v, &[3, 4], mode).unwrap(),
                pad(dense.view(), &[3, 4], mode).unwrap()
            );
        }
        assert_eq!(base[[0, 0]], 0.0, "the caller's array is not modified");
    }

    #[test]
    fn bad_calls_are_typed_errors() {
        let e = Array1::<f32>::zeros(0);
        assert!(matches!(pad(e.view(), &[1], Mode::Wrap), Err(Error::EmptyInput)));
        let a = Array1::<f32>::zeros(3);
        assert!(matches!(
            pad(a.view(), &[1, 1], Mode::Wrap),
            Err(Error::UnsupportedDimension { .. })
        ));
        assert!(matches!(
            pad(a.view(), &[usize::MAX / 2], Mode::Wrap),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            pad(a.view(), &[1 << 30], Mode::Wrap),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn crop_undoes_pad() {
        let a = ramp(&[3, 4, 5]);
        let p = pad(a.view(), &[1, 2, 3], Mode::Reflect).unwrap();
        assert_eq!(crop(p.view(), &[1, 2, 3]), a);
    }
}
