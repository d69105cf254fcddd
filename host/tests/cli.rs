//! `gpuconv filter` end to end: the binary on real PNG/JPEG files, checked against the
//! CPU reference. Without a GPU the binary runs the reference itself; with one it runs
//! the kernels, whose f32 sums may round a u8 differently at .5, hence "within 1".
use gpuconv::{imageio, masks, reference, Mode};
use ndarray::{s, Array2, Array3, ArrayView3};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A command-line argument: a path or a string.
type Arg<'a> = &'a dyn AsRef<OsStr>;

/// The binary under test: cargo's, or `GPUCONV_BIN` where the test binary was built on
/// another machine (the GPU run, `cargo xtask device tests`).
fn gpuconv(args: &[Arg]) -> Output {
    let bin = std::env::var_os("GPUCONV_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_gpuconv").into());
    Command::new(bin)
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A pattern with edges and texture in every channel, so every tap matters.
fn pattern(h: usize, w: usize, c: usize) -> Array3<u8> {
    Array3::from_shape_fn((h, w, c), |(y, x, k)| {
        let v = (x * x * 7 + y * 13 + k * 50 + x * y) % 256;
        if (x / 5 + y / 4) % 3 == 0 {
            255 - v as u8
        } else {
            v as u8
        }
    })
}

fn write_png(dir: &Path, name: &str, img: &Array3<u8>) -> PathBuf {
    let p = dir.join(name);
    imageio::write_image(&p, &img.view()).unwrap();
    p
}

/// Largest per-element difference; panics on a shape mismatch.
fn max_diff(a: &ArrayView3<u8>, b: &ArrayView3<u8>) -> u8 {
    assert_eq!(a.shape(), b.shape());
    a.iter().zip(b.iter()).map(|(x, y)| x.abs_diff(*y)).max().unwrap()
}

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn gaussian_matches_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let img = pattern(23, 37, 3);
    let input = write_png(dir.path(), "in.png", &img);
    let out = dir.path().join("out.png");
    let o = gpuconv(&[
        &"filter",
        &input,
        &out,
        &"--mask",
        &"gaussian",
        &"--sigma",
        &"1.5",
        &"--mode",
        &"reflect",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = imageio::read_image(&out).unwrap();
    let want = reference::correlate_image(img.view(), masks::gaussian(1.5).unwrap().view(), Mode::Reflect);
    assert!(max_diff(&got.view(), &want.view()) <= 1);
    assert!(max_diff(&got.view(), &img.view()) > 20, "the blur changed the image");
    assert_eq!(names(dir.path()), ["in.png", "out.png"], "no temporary file left");
}

#[test]
fn convolve_flips_an_asymmetric_mask_file() {
    let dir = tempfile::tempdir().unwrap();
    let img = pattern(23, 37, 3);
    let input = write_png(dir.path(), "in.png", &img);
    let mask_file = dir.path().join("mask.txt");
    // 3 rows x 5 columns, no symmetry: convolving must differ from correlating.
    std::fs::write(
        &mask_file,
        "# lopsided\n0.1, 0.3, 0, 0, 0\n0 0 0.2 0 0\n0 0 0 0.15 0.25 # end\n",
    )
    .unwrap();
    let mask = Array2::from_shape_vec(
        (3, 5),
        vec![0.1, 0.3, 0., 0., 0., 0., 0., 0.2, 0., 0., 0., 0., 0., 0.15, 0.25],
    )
    .unwrap();
    let (corr, conv) = (dir.path().join("corr.png"), dir.path().join("conv.png"));
    let o = gpuconv(&[&"filter", &input, &corr, &"--mask-file", &mask_file, &"--mode", &"wrap"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gpuconv(&[
        &"filter",
        &input,
        &conv,
        &"--mask-file",
        &mask_file,
        &"--mode",
        &"wrap",
        &"--convolve",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (corr, conv) = (imageio::read_image(&corr).unwrap(), imageio::read_image(&conv).unwrap());
    let want_corr = reference::correlate_image(img.view(), mask.view(), Mode::Wrap);
    let want_conv = reference::convolve_image(img.view(), mask.view(), Mode::Wrap);
    assert!(max_diff(&corr.view(), &want_corr.view()) <= 1);
    assert!(max_diff(&conv.view(), &want_conv.view()) <= 1);
    let differ = corr
        .iter()
        .zip(conv.iter())
        .filter(|(a, b)| a.abs_diff(**b) > 1)
        .count();
    assert!(differ > corr.len() / 2, "only {differ} of {} pixels differ", corr.len());
}

#[test]
fn alpha_is_kept_and_only_color_is_filtered() {
    let dir = tempfile::tempdir().unwrap();
    for c in [2, 4] {
        let img = pattern(19, 26, c);
        let input = write_png(dir.path(), &format!("in{c}.png"), &img);
        let out = dir.path().join(format!("out{c}.png"));
        let o = gpuconv(&[&"filter", &input, &out, &"--mask", &"sharpen", &"--mode", &"nearest"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = imageio::read_image(&out).unwrap();
        assert_eq!(got.dim(), img.dim());
        assert_eq!(
            got.slice(s![.., .., c - 1]),
            img.slice(s![.., .., c - 1]),
            "alpha unchanged"
        );
        let color = img.slice(s![.., .., ..c - 1]);
        let want = reference::correlate_image(color, masks::sharpen().view(), Mode::Nearest);
        assert!(max_diff(&got.slice(s![.., .., ..c - 1]), &want.view()) <= 1);
        assert!(max_diff(&got.view(), &img.view()) > 20, "the color was filtered");
    }
}

#[test]
fn a_directory_is_filtered_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("src"), dir.path().join("out/new"));
    std::fs::create_dir(&src).unwrap();
    std::fs::create_dir(src.join("sub.png")).unwrap(); // a directory: skipped
    std::fs::write(src.join("notes.txt"), "not an image").unwrap(); // skipped
    let imgs = [pattern(20, 30, 3), pattern(17, 11, 1), pattern(9, 14, 4)];
    for (name, img) in ["b.png", "a.png", "c.PNG"].iter().zip(&imgs) {
        write_png(&src, name, img);
    }
    imageio::write_image(&src.join("d.jpg"), &imgs[0].view()).unwrap();
    let o = gpuconv(&[
        &"filter",
        &src,
        &dst,
        &"--mask",
        &"box",
        &"--radius",
        &"2",
        &"--mode",
        &"mirror",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&dst), ["a.png", "b.png", "c.PNG", "d.jpg"]);
    let mask = masks::box_filter(2).unwrap();
    for name in ["a.png", "b.png", "c.PNG", "d.jpg"] {
        let input = imageio::read_image(&src.join(name)).unwrap();
        let got = imageio::read_image(&dst.join(name)).unwrap();
        let c = input.dim().2;
        let color = if c % 2 == 0 { c - 1 } else { c };
        let want = reference::correlate_image(input.slice(s![.., .., ..color]), mask.view(), Mode::Mirror);
        let got = got.slice(s![.., .., ..color]);
        if name.ends_with(".jpg") {
            // JPEG is lossy on the way out: close on average, not to the unit.
            let mean = got
                .iter()
                .zip(want.iter())
                .map(|(a, b)| a.abs_diff(*b) as f64)
                .sum::<f64>()
                / got.len() as f64;
            assert!(mean < 4.0, "{name}: mean difference {mean}");
        } else {
            assert!(max_diff(&got, &want.view()) <= 1, "{name}");
        }
    }
}

#[test]
fn a_failing_file_in_a_directory_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
    std::fs::create_dir(&src).unwrap();
    write_png(&src, "a.png", &pattern(8, 9, 3));
    std::fs::write(src.join("b.png"), "not a png at all").unwrap();
    write_png(&src, "c.png", &pattern(7, 6, 1));
    let o = gpuconv(&[&"filter", &src, &dst]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("b.png") && err.contains("1 of 3"), "{err}");
    assert_eq!(names(&dst), ["a.png", "c.png"], "the good ones written, nothing else");
}

/// Each bad input: a non-zero exit, a message naming the problem, and nothing in the
/// output directory (an existing output file left as it was).
#[test]
fn bad_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("src"), dir.path().join("dst"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&dst).unwrap();
    let good = write_png(&src, "good.png", &pattern(10, 12, 3));
    let fake = src.join("fake.png");
    std::fs::write(&fake, "GIF? no, just text").unwrap();
    let even = src.join("even.txt");
    std::fs::write(&even, "1 2 1\n2 4 2\n").unwrap();
    let ragged = src.join("ragged.txt");
    std::fs::write(&ragged, "1 2 1\n2 4\n1 2 1\n").unwrap();
    let missing = src.join("missing.png");
    let out = dst.join("out.png");
    let bmp = dst.join("out.bmp");

    let cases: Vec<(Vec<Arg>, Vec<&str>)> = vec![
        (vec![&missing, &out], vec!["missing.png", "cannot read"]),
        (vec![&fake, &out], vec!["fake.png", "not a valid image"]),
        (vec![&good, &bmp], vec!["out.bmp", "bmp", ".png"]),
        (vec![&good, &out, &"--mask-file", &even], vec!["even.txt", "2x3", "odd"]),
        (vec![&good, &out, &"--mask-file", &ragged], vec!["ragged.txt", "line 2"]),
        (vec![&good, &out, &"--mode", &"bogus"], vec!["bogus", "reflect", "wrap"]),
        (vec![&good, &out, &"--mask", &"blur"], vec!["blur", "sobel_x", "emboss"]),
        (vec![&good, &out, &"--sigma", &"-1"], vec!["sigma", "-1"]),
        (vec![&good, &out, &"--variant", &"fastest"], vec!["fastest", "auto"]),
        (
            vec![&good, &out, &"--variant", &"conv2d_fast"],
            vec!["conv2d_fast", "image_fast"],
        ),
        (vec![&good, &good], vec!["good.png", "is the input"]),
    ];
    for (args, want) in &cases {
        let mut full: Vec<Arg> = vec![&"filter"];
        full.extend(args.iter().copied());
        let o = gpuconv(&full);
        let err = stderr(&o);
        assert!(!o.status.success(), "{want:?}: exited 0");
        for w in want {
            assert!(err.contains(w), "{want:?}: message lacks `{w}`:\n{err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(names(&dst).is_empty(), "{want:?}: left {:?}", names(&dst));
    }
    assert_eq!(imageio::read_image(&good).unwrap(), pattern(10, 12, 3), "input kept");

    // An existing output survives a failed run as it was.
    std::fs::write(&out, "previous contents").unwrap();
    let o = gpuconv(&[&"filter", &fake, &out]);
    assert!(!o.status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous contents");
    assert_eq!(names(&dst), ["out.png"]);
}
