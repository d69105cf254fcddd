//! Pitched multi-channel images (the book's `wbImage_t`) on every image variant: 1 to 4
//! channels, odd widths, pitches the driver pads and odd ones the caller chooses, u8
//! saturation at both ends, and agreement with the plain-array path.
use gpuconv::image::DeviceImage;
use gpuconv::{reference, Error, Gpu, Mode, Options, Pixel, Variant};
use gpuconv_tests::{check_image_against_reference, gpu, random_array, random_image};
use ndarray::{array, Array3, ArrayView3, Axis};

/// Every image variant that takes `T` pixels (image_mma: u8 only), and Auto.
fn image_variants<T: Pixel>() -> impl Iterator<Item = Variant> {
    Variant::IMAGES
        .into_iter()
        .filter(|v| v.takes_pixels(T::KIND))
        .chain([Variant::Auto])
}

/// `variant` correlates `input` (`img` on the device) with `m` into `output` under zero
/// ghost cells, a constant `fill` and the four mapping modes, each output checked against
/// the reference (`case` names the shape in a failure).
fn every_mode<T: Pixel>(
    gpu: &Gpu,
    variant: Variant,
    (input, output): (&DeviceImage<T>, &mut DeviceImage<T>),
    img: ArrayView3<T>,
    m: ndarray::ArrayView2<f32>,
    fill: f32,
    case: &str,
) {
    let modes = [
        Mode::Zero,
        Mode::Constant(fill),
        Mode::Nearest,
        Mode::Reflect,
        Mode::Mirror,
        Mode::Wrap,
    ];
    for mode in modes {
        gpu.correlate_image_device(input, m, Options { variant, mode }, output)
            .unwrap();
        check_image_against_reference(output.to_host().unwrap().view(), img, m, mode)
            .unwrap_or_else(|e| panic!("{case}, {mode:?}: {e}"));
    }
}

/// `img` on the device and an output of its shape, both at the driver's pitch (`None`)
/// or at `pitch` bytes a row.
fn upload_with_output<'g, T: Pixel>(
    gpu: &'g Gpu,
    img: ArrayView3<T>,
    pitch: Option<usize>,
) -> (DeviceImage<'g, T>, DeviceImage<'g, T>) {
    let (h, w, c) = img.dim();
    match pitch {
        None => (gpu.upload_image(img).unwrap(), gpu.alloc_image(h, w, c).unwrap()),
        Some(pitch) => (
            gpu.upload_image_pitched(img, pitch).unwrap(),
            gpu.alloc_image_pitched(h, w, c, pitch).unwrap(),
        ),
    }
}

/// Every channel count, odd and even widths around the 128-element tiles, three pitches
/// (the driver's, exactly a row, a row plus an odd number of elements), u8 and f32, zero
/// and (where implemented) reflect ghost cells, correlate and convolve.
fn every_shape_and_pitch<T: Pixel>(seed: u64) {
    let gpu = gpu();
    let m = random_array((3, 5), seed);
    for channels in 1..=4 {
        for width in [1usize, 33, 43, 129, 257] {
            let img = random_image::<T>((37, width, channels), seed + width as u64);
            let row = width * channels * std::mem::size_of::<T>();
            for pitch in [None, Some(row), Some(row + 3 * std::mem::size_of::<T>())] {
                for v in image_variants::<T>() {
                    for mode in [Mode::Zero, Mode::Reflect]
                        .into_iter()
                        .filter(|m| *m == Mode::Zero || v != Variant::ImageTiled)
                    {
                        let (n, mut p) = upload_with_output(&gpu, img.view(), pitch);
                        assert!(n.pitch() >= row, "pitch {} for rows of {row} bytes", n.pitch());
                        let opts = Options { variant: v, mode };
                        gpu.correlate_image_device(&n, m.view(), opts, &mut p).unwrap();
                        let what = format!("{v} {mode:?} {channels} channels, width {width}, pitch {:?}", pitch);
                        check_image_against_reference(p.to_host().unwrap().view(), img.view(), m.view(), mode)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        // Convolve: the same with the mask flipped.
                        gpu.convolve_image_device(&n, m.view(), opts, &mut p).unwrap();
                        let flipped = m.slice(ndarray::s![..;-1, ..;-1]);
                        check_image_against_reference(p.to_host().unwrap().view(), img.view(), flipped, mode)
                            .unwrap_or_else(|e| panic!("convolve, {what}: {e}"));
                    }
                }
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn f32_images_every_channel_count_width_and_pitch() {
    every_shape_and_pitch::<f32>(1);
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn u8_images_every_channel_count_width_and_pitch() {
    every_shape_and_pitch::<u8>(2);
}

/// Images wider than two of image_fast's 1024-element tiles, so that blocks stage
/// windows wholly inside the image (the tests above are narrower than a tile): every
/// channel count, u8 and f32, zero, reflect and constant ghost cells, at the driver's
/// pitch and at a row plus 8, 4 and 3 pixels' bytes (for u8 the first three keep rows
/// 4-pixel aligned, staged by groups; the rest, and f32's chosen pitches, cell by cell).
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn wide_images_stage_their_interior_windows() {
    fn case<T: Pixel>(seed: u64) {
        let gpu = gpu();
        let size = std::mem::size_of::<T>();
        for (channels, width) in [(1usize, 3300usize), (2, 1650), (3, 1100), (4, 830)] {
            let img = random_image::<T>((70, width, channels), seed + channels as u64);
            let row = width * channels * size;
            for pitch in [None, Some(row + 8), Some(row + 4), Some(row + 3 * size)] {
                let (n, mut p) = upload_with_output(&gpu, img.view(), pitch);
                for radius in [1usize, 3] {
                    let m = random_array((2 * radius + 1, 2 * radius + 1), seed + radius as u64);
                    for mode in [Mode::Zero, Mode::Reflect, Mode::Constant(3.0)] {
                        let opts = Options {
                            variant: Variant::ImageFast,
                            mode,
                        };
                        gpu.correlate_image_device(&n, m.view(), opts, &mut p).unwrap();
                        check_image_against_reference(p.to_host().unwrap().view(), img.view(), m.view(), mode)
                            .unwrap_or_else(|e| {
                                panic!(
                                    "{channels} channels, width {width}, pitch {pitch:?}, r = {radius}, {mode:?}: {e}"
                                )
                            });
                    }
                }
            }
        }
    }
    case::<u8>(80);
    case::<f32>(90);
}

/// u8 outputs saturate at 0 and 255 and round to nearest: integer pixels and taps make
/// every f32 sum exact, so the GPU must equal the reference exactly. Twice a pixel of 200
/// is 400 -> 255; minus a pixel is negative -> 0; half of 5 is 2.5 -> 2 (ties to even)
/// and half of 7 is 3.5 -> 4.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn u8_outputs_saturate_and_round_to_nearest_even() {
    let gpu = gpu();
    let img = Array3::from_shape_fn((9, 70, 3), |(y, x, c)| [200u8, 5, 7, 0, 255][(y + x + c) % 5]);
    let masks = [
        array![[0.0f32, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]],
        array![[0.0f32, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]],
        array![[0.5f32]],
        array![[1.0f32, 1.0, 1.0], [1.0, -8.0, 1.0], [1.0, 1.0, 1.0]],
    ];
    for m in &masks {
        let want = reference::correlate_image(img.view(), m.view(), Mode::Zero);
        for v in image_variants::<u8>() {
            let got = gpu.correlate_image(img.view(), m.view(), Options::variant(v)).unwrap();
            assert_eq!(got, want, "{v}, mask {m:?}");
        }
    }
    let doubled = gpu
        .correlate_image(img.view(), masks[0].view(), Options::default())
        .unwrap();
    assert!(doubled.iter().any(|&p| p == 255) && doubled.iter().any(|&p| p == 10));
    let halved = gpu
        .correlate_image(img.view(), masks[2].view(), Options::default())
        .unwrap();
    assert_eq!((halved[[0, 1, 0]], halved[[0, 2, 0]]), (2, 4), "2.5 -> 2, 3.5 -> 4");
    let negated = gpu
        .correlate_image(img.view(), masks[1].view(), Options::default())
        .unwrap();
    assert!(negated.iter().all(|&p| p == 0));
}

/// u8 outputs of sums past every integer range and of non-finite sums: a 3 x 3 mask whose
/// centre is ±1e30, ±infinity or NaN (the rest 0) makes each output that centre times a
/// pixel, which must saturate as the reference does (past 255 -> 255, below 0 -> 0, NaN
/// and 0·infinity -> 0), through every image variant that takes u8 and Auto, on an
/// image three byte-ring tiles wide with 3 channels (its whole rows of 8 bytes are
/// rounded and packed two floats at a time, `device::pack_u8_pairs`) and with 1.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn u8_outputs_of_huge_and_non_finite_sums_saturate() {
    let gpu = gpu();
    for channels in [3, 1] {
        let img = random_image::<u8>((40, 200, channels), 300 + channels as u64);
        for centre in [1e30f32, -1e30, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            let mut m = ndarray::Array2::<f32>::zeros((3, 3));
            m[[1, 1]] = centre;
            let want = reference::correlate_image(img.view(), m.view(), Mode::Zero);
            for v in image_variants::<u8>() {
                match gpu.correlate_image(img.view(), m.view(), Options::variant(v)) {
                    Ok(got) => assert_eq!(got, want, "{v}, {channels} channels, centre {centre}"),
                    // `image_mma` takes only taps it can hold exactly, and says so.
                    Err(e) => assert_eq!(v, Variant::ImageMma, "{v} refused centre {centre}: {e}"),
                }
            }
        }
    }
}

/// An f32 image through the image kernels equals the same pixels as a 3D array under a
/// (ky, kx, 1) mask through the plain-array kernels, within both tolerances.
/// Masks past image_fast's radii (> 4), every mode: Auto runs each channel plane through
/// the 2D array kernels (faster than image_tiled, and every mode); u8 rounds as the
/// image kernels do.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn auto_runs_wide_masks_under_every_mode_by_channel_planes() {
    fn case<T: Pixel>(seed: u64) {
        let gpu = gpu();
        let img = random_image::<T>((37, 150, 3), seed);
        let general = random_array((13, 11), seed + 1); // radii 5 (x) and 6 (y): conv2d_fast
        let col = random_array(21, seed + 2);
        let row = random_array(17, seed + 3);
        let rank1 = ndarray::Array2::from_shape_fn((21, 17), |(i, j)| col[i] * row[j]); // conv2d_separable
        for m in [general, rank1] {
            let (ky, kx) = m.dim();
            let radius = [kx as u32 / 2, ky as u32 / 2, 0];
            for mode in [
                Mode::Zero,
                Mode::Reflect,
                Mode::Nearest,
                Mode::Wrap,
                Mode::Mirror,
                Mode::Constant(3.0),
            ] {
                assert!(Variant::ImageFast.resolve_image(radius, 3, mode).is_err());
                let got = gpu
                    .correlate_image(img.view(), m.view(), Options::mode(mode))
                    .unwrap_or_else(|e| panic!("{ky}x{kx} {mode:?}: {e}"));
                if let Err(e) = check_image_against_reference(got.view(), img.view(), m.view(), mode) {
                    panic!("{ky}x{kx} {mode:?}: {e}");
                }
            }
        }
        // A named image variant keeps its limits.
        let m = random_array((13, 13), seed + 4);
        let r = gpu.correlate_image(
            img.view(),
            m.view(),
            Options {
                variant: Variant::ImageFast,
                mode: Mode::Reflect,
            },
        );
        assert!(matches!(r, Err(Error::MaskTooLarge { .. })), "{r:?}");
    }
    case::<f32>(60);
    case::<u8>(70);
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn images_agree_with_the_array_path() {
    let gpu = gpu();
    let img = random_image::<f32>((50, 140, 3), 3);
    let m = random_array((5, 5), 4);
    for mode in Mode::ALL {
        let as_image = gpu.correlate_image(img.view(), m.view(), Options::mode(mode)).unwrap();
        let as_array = gpu
            .correlate(img.view(), m.view().insert_axis(Axis(2)), Options::mode(mode))
            .unwrap();
        let abs = reference::correlate_abs(img.view(), m.view().insert_axis(Axis(2)), mode);
        for ((a, b), s) in as_image.iter().zip(as_array.iter()).zip(abs.iter()) {
            let tol = 2.0 * reference::tolerance(*s as f64, m.len());
            assert!(((a - b).abs() as f64) <= tol, "{mode:?}: image {a}, array {b}");
        }
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn bad_images_and_pitches_are_typed_errors() {
    let gpu = gpu();
    let img = random_image::<f32>((10, 20, 3), 5);
    let m = random_array((3, 3), 6);
    // Pitch below a row, or not a multiple of the channel size.
    for pitch in [20 * 3 * 4 - 4, 20 * 3 * 4 + 2] {
        match gpu.upload_image_pitched(img.view(), pitch) {
            Err(e @ Error::BadPitch { .. }) => assert!(e.to_string().contains(&pitch.to_string()), "{e}"),
            Err(e) => panic!("pitch {pitch}: expected BadPitch, got {e}"),
            Ok(_) => panic!("pitch {pitch}: expected BadPitch, got an image"),
        }
    }
    // Five channels, or none; an empty image.
    let five = random_image::<u8>((4, 4, 5), 7);
    assert!(matches!(
        gpu.correlate_image(five.view(), m.view(), Options::default()),
        Err(Error::Channels { channels: 5 })
    ));
    assert!(matches!(gpu.alloc_image::<u8>(4, 4, 0), Err(Error::EmptyInput)));
    assert!(matches!(gpu.alloc_image::<f32>(0, 4, 3), Err(Error::EmptyInput)));
    // Output of another shape or pitch; the output is left alone.
    let n = gpu.upload_image(img.view()).unwrap();
    let sentinel = Array3::from_elem((10, 20, 3), 7.0f32);
    let mut other_pitch = gpu.upload_image_pitched(sentinel.view(), 20 * 3 * 4 + 12).unwrap();
    assert!(matches!(
        gpu.correlate_image_device(&n, m.view(), Options::default(), &mut other_pitch),
        Err(Error::PitchMismatch { .. })
    ));
    assert_eq!(
        other_pitch.to_host().unwrap(),
        sentinel,
        "a refused call wrote the output"
    );
    let mut other_shape = gpu.alloc_image::<f32>(10, 21, 3).unwrap();
    assert!(matches!(
        gpu.correlate_image_device(&n, m.view(), Options::default(), &mut other_shape),
        Err(Error::ShapeMismatch { .. })
    ));
    // Plain-array kernels refuse images and image kernels refuse arrays.
    assert!(matches!(
        gpu.correlate_image(img.view(), m.view(), Options::variant(Variant::Conv2dFast)),
        Err(Error::NotForImages {
            variant: Variant::Conv2dFast
        })
    ));
    assert!(matches!(
        gpu.conv(random_array((8, 8), 8).view(), m.view(), Variant::ImageFast),
        Err(Error::OnlyForImages {
            variant: Variant::ImageFast
        })
    ));
    // The textbook image kernel keeps zero ghost cells; image_fast stops at radius 4.
    assert!(matches!(
        gpu.correlate_image(
            img.view(),
            m.view(),
            Options {
                variant: Variant::ImageTiled,
                mode: Mode::Wrap
            }
        ),
        Err(Error::ModeUnsupported { .. })
    ));
    assert!(matches!(
        gpu.correlate_image(
            img.view(),
            random_array((11, 11), 9).view(),
            Options {
                variant: Variant::ImageFast,
                mode: Mode::Zero
            }
        ),
        Err(Error::MaskTooLarge {
            variant: Variant::ImageFast,
            max: 4,
            ..
        })
    ));
}

/// image_mma (u8 on the tensor cores) on images tall and wide enough for tiles wholly
/// inside them (64 rows × 64 pixels), every channel count, radii 0 to 4, every mode
/// (constant with integer fills; at r = 1, 2 positive and negative), at the driver's
/// pitch and at a row plus 1 and 3 bytes (every row's alignment differs), with masks of
/// mixed signs and magnitudes.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn image_mma_tiles_inside_and_at_borders() {
    let gpu = gpu();
    for (channels, width) in [(1usize, 700usize), (2, 350), (3, 240), (4, 180)] {
        let img = random_image::<u8>((150, width, channels), 500 + channels as u64);
        let row = width * channels;
        for pitch in [None, Some(row + 1), Some(row + 3)] {
            let (n, mut p) = upload_with_output(&gpu, img.view(), pitch);
            for radius in 0..=4usize {
                let k = 2 * radius + 1;
                let m = random_array((k, k), 600 + radius as u64).mapv(|t| t * 37.0);
                let case = format!("{channels} channels, width {width}, pitch {pitch:?}, r = {radius}");
                every_mode(&gpu, Variant::ImageMma, (&n, &mut p), img.view(), m.view(), -7.0, &case);
                // The integer path (r = 1, 2) stages a fill a byte holds in the ghost
                // cells, and adds any other's term to the border outputs: both ways.
                if layout::families::image_mma::imma(radius as u32) {
                    for mode in [Mode::Constant(7.0), Mode::Constant(255.0), Mode::Constant(-255.0)] {
                        let opts = Options {
                            variant: Variant::ImageMma,
                            mode,
                        };
                        gpu.correlate_image_device(&n, m.view(), opts, &mut p).unwrap();
                        check_image_against_reference(p.to_host().unwrap().view(), img.view(), m.view(), mode)
                            .unwrap_or_else(|e| panic!("{case}, {mode:?}: {e}"));
                    }
                }
            }
        }
    }
}

/// image_patches (conv2d_fast's tiles over interleaved channels) on images several tiles
/// wide and tall (128 floats × 64 rows a tile with several channels, 32 with one; u8
/// tiles inside the image are copied as bytes, 16 a copy), every channel count, radii 0
/// to 4 and one rectangular mask, every mode, at the driver's pitch and at pitches that
/// break its alignment (f32: a row plus 1 and 3 floats; u8: a row plus 1, 3 and 16
/// bytes): it matches the reference, and Auto runs it on f32 images.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn image_patches_runs_f32_and_u8_images() {
    let gpu = gpu();
    image_patches_round::<f32>(&gpu, &[4, 12], Variant::Auto);
    image_patches_round::<u8>(&gpu, &[1, 3, 16], Variant::ImagePatches);
}

/// image_patches' u8 tiles at r <= 1 (its byte ring, `layout::families::conv2d_fast::byte_ring`)
/// on images three of their tiles wide and two and a bit tall, for every channel count:
/// a tile wholly inside (copied as it is at the driver's pitch), tiles at every border
/// (their inside copied, the groups beside the plane copied, gathered, filled or, across
/// a right edge that is not a multiple of 16 bytes, staged cell by cell), a last column and row cut
/// short, at pitches that keep rows 16-byte aligned and ones that do not (staged word
/// by word), under zero ghost cells, the mapping modes and a byte-valued constant. At the
/// driver's pitch also with rows of exactly three tiles (a multiple of 16 bytes), where
/// wrap copies the groups beside the plane whole and the other mapping modes gather the
/// right border's pixel into place (`stage::group16`).
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn u8_byte_ring_tiles_inside_and_at_borders() {
    use layout::families::conv2d_fast::{byte_tile_h, byte_tile_w};
    let gpu = gpu();
    for channels in 1..=4usize {
        for r in 0..=1usize {
            let c = channels as u32;
            let (tw, th) = (byte_tile_w(r as u32, c) as usize, byte_tile_h(r as u32, c) as usize);
            let h = 2 * th + 2 * r + 13;
            // Rows of 3·tw + 40 bytes, rounded up to whole pixels (not a multiple of 16),
            // and of 3·tw (a multiple of 48: of 16 and of every channel count).
            let (cut, whole) = ((3 * tw + 40).div_ceil(channels), 3 * tw / channels);
            assert_eq!((3 * tw) % 48, 0, "tiles {tw} bytes wide");
            let shapes = [
                (cut, vec![None, Some(cut * channels + 1), Some(cut * channels + 8)]),
                (whole, vec![None]),
            ];
            for (width, pitch) in shapes.into_iter().flat_map(|(w, p)| p.into_iter().map(move |p| (w, p))) {
                let img = random_image::<u8>((h, width, channels), 900 + (4 * r + channels + width) as u64);
                let (n, mut p) = upload_with_output(&gpu, img.view(), pitch);
                let m = random_array((2 * r + 1, 2 * r + 1), 950 + r as u64);
                let case = format!("{channels} channels, {h} x {width}, pitch {pitch:?}, r = {r}");
                every_mode(
                    &gpu,
                    Variant::ImagePatches,
                    (&n, &mut p),
                    img.view(),
                    m.view(),
                    9.0,
                    &case,
                );
            }
        }
    }
}

/// `image_patches` on `T` images of `channels` channels 3 tiles of `tw` elements across
/// and `down` tiles of `th` rows down (more tiles than a GPU holds blocks at once, so that
/// most are handed out by the launch's counter: `device::counted_tiles`), launched one
/// after another on one `Gpu` with a `2r + 1` square mask: each checked against the
/// reference, and a small image between two large ones, so a launch that left the counter
/// anywhere but 0 would skip or repeat the next one's tiles.
fn handed_out_one_launch_after_another<T: Pixel>(r: usize, channels: usize, (tw, th): (u32, u32), down: usize) {
    let gpu = gpu();
    let m = random_array((2 * r + 1, 2 * r + 1), 971 + r as u64);
    let (tw, th) = (tw as usize, th as usize);
    let seed = 972 + 8 * r as u64 + channels as u64;
    let large = random_image::<T>((down * th - 5, 3 * tw / channels, channels), seed);
    let small = random_image::<T>((th + 3, tw / channels + 7, channels), seed + 4);
    for (img, mode) in [
        (&large, Mode::Zero),
        (&small, Mode::Reflect),
        (&large, Mode::Wrap),
        (&large, Mode::Zero),
    ] {
        let (n, mut p) = upload_with_output(&gpu, img.view(), None);
        let opts = Options {
            variant: Variant::ImagePatches,
            mode,
        };
        gpu.correlate_image_device(&n, m.view(), opts, &mut p).unwrap();
        check_image_against_reference(p.to_host().unwrap().view(), img.view(), m.view(), mode)
            .unwrap_or_else(|e| panic!("r = {r}, {channels} channels, {:?}, {mode:?}: {e}", img.dim()));
    }
}

/// u8 byte-ring tiles (r = 1) handed out by the counter (2 to 4 channels; one channel
/// walks them in turn): 3 × 800 tiles, against 396 blocks on an H200.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn u8_byte_ring_tiles_handed_out_one_launch_after_another() {
    use layout::families::conv2d_fast::{byte_tile_h, byte_tile_w};
    for c in 1..=4 {
        handed_out_one_launch_after_another::<u8>(1, c as usize, (byte_tile_w(1, c), byte_tile_h(1, c)), 800);
    }
}

/// The persistent radii's tiles (r = 3, 4; f32 by tensor copies, u8 by threads) handed
/// out by the counter, 1 and 3 channels: 3 × 300 tiles, against at most 396 blocks on an
/// H200 (two rounds of which are the blocks' own).
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn persistent_tiles_handed_out_one_launch_after_another() {
    use layout::families::conv2d_fast::{tile_h, TILE_W};
    for r in 3..=4 {
        for c in [1, 3] {
            let tile = (TILE_W, tile_h(r, c));
            handed_out_one_launch_after_another::<f32>(r as usize, c as usize, tile, 300);
            handed_out_one_launch_after_another::<u8>(r as usize, c as usize, tile, 300);
        }
    }
}

/// One entry launched with each pixel type's shared memory in turn, u8 first
/// (`image_patches_c1_r4`: u8 tiles take more than f32's, both above 48 KiB): each launch
/// runs with the opt-in it needs, whatever ran before (the driver keeps one size a
/// function; a u8 launch after an f32 one failed with "invalid argument").
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn one_entry_takes_both_pixel_types_in_either_order() {
    let gpu = gpu();
    let m = random_array((9, 9), 31);
    for round in 0..2 {
        patches_once::<u8>(&gpu, m.view(), 32 + round);
        patches_once::<f32>(&gpu, m.view(), 34 + round);
    }
}

/// `image_patches` on a random 1-channel `T` image, checked against the reference.
fn patches_once<T: Pixel>(gpu: &Gpu, m: ndarray::ArrayView2<f32>, seed: u64) {
    let img = random_image::<T>((40, 50, 1), seed);
    let (n, mut p) = upload_with_output(gpu, img.view(), None);
    let opts = Options {
        variant: Variant::ImagePatches,
        mode: Mode::Zero,
    };
    gpu.correlate_image_device(&n, m, opts, &mut p).unwrap();
    check_image_against_reference(p.to_host().unwrap().view(), img.view(), m, Mode::Zero)
        .unwrap_or_else(|e| panic!("{:?} seed {seed}: {e}", T::KIND));
}

/// One round of [`image_patches_runs_f32_and_u8_images`] on `T` pixels: pitches of a
/// row plus each of `extra` bytes and the driver's, run as `variant`, which must run
/// image_patches.
fn image_patches_round<T: Pixel>(gpu: &Gpu, extra: &[usize], variant: Variant) {
    for (channels, width) in [(1usize, 300usize), (2, 150), (3, 101), (4, 75)] {
        let img = random_image::<T>((140, width, channels), 700 + channels as u64);
        let row = width * channels * std::mem::size_of::<T>();
        let pitches = std::iter::once(None).chain(extra.iter().map(|e| Some(row + e)));
        for pitch in pitches {
            let (n, mut p) = upload_with_output(gpu, img.view(), pitch);
            let masks = (0..=4usize)
                .map(|r| (2 * r + 1, 2 * r + 1))
                .chain([(3, 9)])
                .map(|(ky, kx)| random_array((ky, kx), 800 + (ky * 10 + kx) as u64));
            for m in masks {
                // Constant fills a byte value and not (u8 at r <= 1: tiles staged as
                // bytes, or through f32).
                for mode in [
                    Mode::Zero,
                    Mode::Constant(-0.75),
                    Mode::Constant(7.0),
                    Mode::Constant(255.0),
                    Mode::Nearest,
                    Mode::Reflect,
                    Mode::Mirror,
                    Mode::Wrap,
                ] {
                    let ran = gpu
                        .correlate_image_device(&n, m.view(), Options { variant, mode }, &mut p)
                        .unwrap();
                    assert_eq!(ran, Variant::ImagePatches, "{variant:?} on {:?} images", T::KIND);
                    check_image_against_reference(p.to_host().unwrap().view(), img.view(), m.view(), mode)
                        .unwrap_or_else(|e| {
                            panic!(
                                "{:?}, {channels} channels, pitch {pitch:?}, mask {:?}, {mode:?}: {e}",
                                T::KIND,
                                m.dim()
                            )
                        });
                }
            }
        }
    }
}

/// image_mma refuses, with a typed error and the output untouched, what it cannot take
/// exactly: f32 pixels, a mask whose sum of |taps| overflows f32, a fractional or
/// out-of-range constant fill; Auto then runs image_patches (at r = 1) and matches the
/// reference.
#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn image_mma_refuses_what_it_cannot_take_exactly() {
    let gpu = gpu();
    let f = random_image::<f32>((8, 9, 3), 1);
    let m = random_array((3, 3), 2);
    let named = |mode| Options {
        variant: Variant::ImageMma,
        mode,
    };
    assert!(matches!(
        gpu.correlate_image(f.view(), m.view(), named(Mode::Zero)),
        Err(Error::ImageCallUnsupported { .. })
    ));
    let img = random_image::<u8>((70, 300, 3), 3);
    let huge = m.mapv(|t| t * 3e38);
    let (n, mut p) = upload_with_output(&gpu, img.view(), None);
    for (mask, mode) in [
        (huge.view(), Mode::Zero),
        (m.view(), Mode::Constant(2.5)),
        (m.view(), Mode::Constant(300.0)),
    ] {
        let before = p.to_host().unwrap();
        let got = gpu.correlate_image_device(&n, mask, named(mode), &mut p);
        assert!(
            matches!(got, Err(Error::ImageCallUnsupported { .. })),
            "{mode:?}: {got:?}"
        );
        assert_eq!(
            p.to_host().unwrap(),
            before,
            "a refused call leaves the output as it was"
        );
        let auto = Options {
            variant: Variant::Auto,
            mode,
        };
        assert_eq!(
            gpu.correlate_image_device(&n, mask, auto, &mut p).unwrap(),
            Variant::ImagePatches
        );
        if let Mode::Constant(_) = mode {
            // (Under the huge mask f32 sums overflow in every kernel: no reference check.)
            check_image_against_reference(p.to_host().unwrap().view(), img.view(), mask, mode).unwrap();
        }
    }
    // Where it takes the call, Auto runs u8 images on it from its AUTO_FROM_RADIUS
    // (image_patches below, but for r = 0: image_fast).
    let auto = Options::variant(Variant::Auto);
    for (k, seed) in [(1, 4), (3, 5), (5, 7), (9, 6)] {
        let m3 = random_array((k, k), seed);
        let r = k as u32 / 2;
        let expected = if r >= layout::families::image_mma::AUTO_FROM_RADIUS {
            Variant::ImageMma
        } else if layout::families::image_patches::U8_AUTO_RADII.contains(&r) {
            Variant::ImagePatches
        } else {
            Variant::ImageFast
        };
        assert_eq!(
            gpu.correlate_image_device(&n, m3.view(), auto, &mut p).unwrap(),
            expected,
            "{k}x{k}"
        );
        check_image_against_reference(p.to_host().unwrap().view(), img.view(), m3.view(), Mode::Zero).unwrap();
    }
}
