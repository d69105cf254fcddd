//! Named 2D masks, the ones a scipy.ndimage, OpenCV or NPP user reaches for, and mask
//! text files. Every mask is in correlation orientation (`P = Σ N[y+j, x+i] · M[j, i]`,
//! what [`crate::Gpu::correlate_image`] computes) and has odd sides, so it has a centre.
use crate::error::{Error, Result};
use ndarray::{array, Array2};
use std::path::Path;

/// The names [`by_name`] knows.
pub const NAMES: [&str; 7] = [
    "gaussian",
    "box",
    "sobel_x",
    "sobel_y",
    "laplacian",
    "sharpen",
    "emboss",
];

/// The largest radius [`gaussian`] and [`box_filter`] build: a 2001x2001 mask (16 MB),
/// far past any kernel's limit, small enough that a typo cannot exhaust memory.
pub const MAX_RADIUS: usize = 1000;

/// A Gaussian blur: taps `exp(-(x²+y²)/2σ²)` normalized to sum 1, radius `ceil(3σ)`
/// (at least 1), which holds 99.7% of the weight along each axis (scipy's `truncate=3`).
pub fn gaussian(sigma: f32) -> Result<Array2<f32>> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::BadSigma { sigma });
    }
    let r = (3.0 * f64::from(sigma)).ceil().max(1.0);
    if r > MAX_RADIUS as f64 {
        return Err(Error::NamedMaskRadius {
            radius: r as usize,
            max: MAX_RADIUS,
        });
    }
    let r = r as usize;
    let s2 = 2.0 * f64::from(sigma).powi(2);
    let g = |i: usize| (-((i as f64 - r as f64).powi(2)) / s2).exp();
    // Summed in f64 and normalized there, so the f32 taps sum to 1 within rounding.
    let taps = Array2::from_shape_fn((2 * r + 1, 2 * r + 1), |(y, x)| g(y) * g(x));
    let sum = taps.sum();
    Ok(taps.mapv(|t| (t / sum) as f32))
}

/// A box (mean) filter of radius `radius`: `(2r+1)²` taps of `1/(2r+1)²`.
pub fn box_filter(radius: usize) -> Result<Array2<f32>> {
    if radius > MAX_RADIUS {
        return Err(Error::NamedMaskRadius {
            radius,
            max: MAX_RADIUS,
        });
    }
    let k = 2 * radius + 1;
    Ok(Array2::from_elem((k, k), 1.0 / (k * k) as f32))
}

/// The horizontal Sobel derivative: positive where values increase to the right.
pub fn sobel_x() -> Array2<f32> {
    array![[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]
}

/// The vertical Sobel derivative: positive where values increase downwards (rows).
pub fn sobel_y() -> Array2<f32> {
    array![[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]
}

/// The 4-neighbour Laplacian (sums to 0: flat regions go to 0).
pub fn laplacian() -> Array2<f32> {
    array![[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]
}

/// Sharpening: the image minus its 4-neighbour Laplacian (sums to 1: flat regions kept).
pub fn sharpen() -> Array2<f32> {
    array![[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]]
}

/// Emboss, lit from the top left (sums to 1: flat regions kept).
pub fn emboss() -> Array2<f32> {
    array![[-2.0, -1.0, 0.0], [-1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]
}

/// The mask called `name` (one of [`NAMES`]); `sigma` is the Gaussian's, `radius` the
/// box filter's, both ignored by the fixed 3x3 masks.
pub fn by_name(name: &str, sigma: f32, radius: usize) -> Result<Array2<f32>> {
    match name {
        "gaussian" => gaussian(sigma),
        "box" => box_filter(radius),
        "sobel_x" => Ok(sobel_x()),
        "sobel_y" => Ok(sobel_y()),
        "laplacian" => Ok(laplacian()),
        "sharpen" => Ok(sharpen()),
        "emboss" => Ok(emboss()),
        _ => Err(Error::UnknownMask {
            name: name.to_string(),
            known: NAMES.join(", "),
        }),
    }
}

/// Parses mask text: one row per non-empty line, numbers separated by whitespace and/or
/// commas, `#` starting a comment to the end of the line. Rows must all be as long as
/// the first, and both sides odd.
pub fn parse_mask(text: &str) -> Result<Array2<f32>> {
    let mut taps = Vec::new();
    let (mut rows, mut cols) = (0, 0);
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let content = line.split('#').next().unwrap_or("");
        let row = content
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| match t.parse::<f32>() {
                // "nan" and "inf" parse, but no mask made of them filters anything.
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(Error::MaskNumber {
                    line: line_no,
                    token: t.to_string(),
                }),
            })
            .collect::<Result<Vec<f32>>>()?;
        if row.is_empty() {
            continue;
        }
        if rows == 0 {
            cols = row.len();
        } else if row.len() != cols {
            return Err(Error::MaskRagged {
                line: line_no,
                got: row.len(),
                want: cols,
            });
        }
        taps.extend(row);
        rows += 1;
    }
    if rows == 0 {
        return Err(Error::MaskEmpty);
    }
    if rows % 2 == 0 || cols % 2 == 0 {
        return Err(Error::MaskEven { rows, cols });
    }
    Ok(Array2::from_shape_vec((rows, cols), taps).expect("rows x cols taps"))
}

/// Reads and parses a mask file ([`parse_mask`]); errors name the file.
pub fn load_mask(path: &Path) -> Result<Array2<f32>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_mask(&text).map_err(|e| Error::MaskFile {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reference, Mode};
    use ndarray::Array3;

    #[test]
    fn gaussian_is_normalized_symmetric_and_peaks_in_the_centre() {
        for (sigma, r) in [(0.1f32, 1usize), (1.0, 3), (1.5, 5), (2.0, 6)] {
            let g = gaussian(sigma).unwrap();
            assert_eq!(g.dim(), (2 * r + 1, 2 * r + 1), "sigma {sigma}");
            assert!((g.sum() - 1.0).abs() < 1e-5, "sigma {sigma}: sum {}", g.sum());
            assert_eq!(g, g.t(), "symmetric about the diagonal");
            let mut flipped = g.clone();
            flipped.invert_axis(ndarray::Axis(0));
            assert_eq!(g, flipped, "symmetric about the middle row");
            let peak = g[[r, r]];
            assert!(g.iter().all(|&t| t > 0.0 && t <= peak));
        }
        // Neighbour ratio is exp(-1/2σ²) along an axis.
        let g = gaussian(1.0).unwrap();
        assert!((g[[3, 4]] / g[[3, 3]] - (-0.5f32).exp()).abs() < 1e-6);
    }

    #[test]
    fn gaussian_rejects_bad_sigmas() {
        for s in [0.0f32, -1.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(gaussian(s), Err(Error::BadSigma { .. })), "{s}");
        }
        assert!(matches!(
            gaussian(1e6),
            Err(Error::NamedMaskRadius { max: MAX_RADIUS, .. })
        ));
    }

    #[test]
    fn box_filter_is_uniform() {
        let b = box_filter(2).unwrap();
        assert_eq!(b.dim(), (5, 5));
        assert!(b.iter().all(|&t| t == 1.0 / 25.0));
        assert_eq!(box_filter(0).unwrap(), array![[1.0f32]]);
        assert!(matches!(box_filter(MAX_RADIUS + 1), Err(Error::NamedMaskRadius { .. })));
    }

    #[test]
    fn fixed_masks_have_their_sums_and_shapes() {
        for (name, sum) in [
            ("sobel_x", 0.0),
            ("sobel_y", 0.0),
            ("laplacian", 0.0),
            ("sharpen", 1.0),
            ("emboss", 1.0),
        ] {
            let m = by_name(name, 1.0, 1).unwrap();
            assert_eq!(m.dim(), (3, 3), "{name}");
            assert_eq!(m.sum(), sum, "{name}");
        }
        assert_eq!(laplacian()[[1, 1]], -4.0);
        assert_eq!(sharpen()[[1, 1]], 5.0);
        assert_eq!(emboss()[[2, 2]], 2.0);
        assert_eq!(sobel_y(), sobel_x().t(), "sobel_y is sobel_x turned");
    }

    /// In correlation orientation, a ramp increasing to the right (down) gives sobel_x
    /// (sobel_y) a positive constant, 8 per unit step, away from the edges.
    #[test]
    fn sobel_responds_positively_to_increasing_ramps() {
        let ramp_x = Array2::from_shape_fn((7, 9), |(_, x)| x as f32);
        let gx = reference::correlate(ramp_x.view(), sobel_x().view(), Mode::Zero);
        let gy = reference::correlate(ramp_x.view(), sobel_y().view(), Mode::Zero);
        for y in 1..6 {
            for x in 1..8 {
                assert_eq!(gx[[y, x]], 8.0, "({y}, {x})");
                assert_eq!(gy[[y, x]], 0.0, "({y}, {x})");
            }
        }
        let ramp_y = ramp_x.t().to_owned();
        let gy = reference::correlate(ramp_y.view(), sobel_y().view(), Mode::Nearest);
        assert!(gy.slice(ndarray::s![1..8, 1..6]).iter().all(|&v| v == 8.0));
    }

    /// Through the image path as well: every channel sees the same mask.
    #[test]
    fn box_blur_of_a_constant_image_is_the_constant() {
        let img = Array3::from_elem((6, 5, 3), 77u8);
        let out = reference::correlate_image(img.view(), box_filter(2).unwrap().view(), Mode::Reflect);
        assert_eq!(out, img);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = by_name("blur", 1.0, 1).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::UnknownMask { .. }));
        for n in NAMES {
            assert!(msg.contains(n), "{msg}");
            assert!(by_name(n, 1.0, 1).is_ok(), "{n}");
        }
        assert!(msg.contains("blur"));
    }

    #[test]
    fn parses_rows_commas_and_comments() {
        let m = parse_mask("# a 3x3\n 1, 2 3 # trailing\n\n4,5,6\n7\t8 ,9\n# end\n").unwrap();
        assert_eq!(m, array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
        assert_eq!(parse_mask("-0.5 1e-1 2.5").unwrap(), array![[-0.5, 0.1, 2.5]]);
        assert_eq!(parse_mask("3\n").unwrap(), array![[3.0]]);
    }

    #[test]
    fn parse_errors_name_the_line() {
        assert!(matches!(
            parse_mask("1 2 3\n4 x 6\n7 8 9"),
            Err(Error::MaskNumber { line: 2, ref token }) if token == "x"
        ));
        assert!(matches!(
            parse_mask("# c\n1 2 3\n\n4 5\n7 8 9"),
            Err(Error::MaskRagged {
                line: 4,
                got: 2,
                want: 3
            })
        ));
        assert!(matches!(
            parse_mask("1 2 3\n4 5 6"),
            Err(Error::MaskEven { rows: 2, cols: 3 })
        ));
        assert!(matches!(
            parse_mask("1 2\n3 4\n5 6"),
            Err(Error::MaskEven { rows: 3, cols: 2 })
        ));
        assert!(matches!(parse_mask("\n# only a comment\n  \n"), Err(Error::MaskEmpty)));
        assert!(matches!(parse_mask(""), Err(Error::MaskEmpty)));
        assert!(matches!(parse_mask("1 nan 1"), Err(Error::MaskNumber { line: 1, .. })));
        assert!(matches!(parse_mask("inf"), Err(Error::MaskNumber { line: 1, .. })));
        let msg = parse_mask("1 2 3\n4 5").unwrap_err().to_string();
        assert!(msg.contains("line 2"), "{msg}");
    }

    #[test]
    fn load_mask_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let e = load_mask(&missing).unwrap_err();
        assert!(matches!(e, Error::Read { .. }));
        assert!(e.to_string().contains("missing.txt"), "{e}");

        let bad = dir.path().join("even.txt");
        std::fs::write(&bad, "1 2\n3 4\n").unwrap();
        let e = load_mask(&bad).unwrap_err();
        assert!(matches!(&e, Error::MaskFile { source, .. } if matches!(**source, Error::MaskEven { .. })));
        assert!(e.to_string().contains("even.txt"), "{e}");

        let good = dir.path().join("good.txt");
        std::fs::write(&good, "0 1 0\n").unwrap();
        assert_eq!(load_mask(&good).unwrap(), array![[0.0, 1.0, 0.0]]);
    }
}
