//! PNG and JPEG files to and from `(height, width, channels)` u8 arrays, the layout
//! [`crate::Gpu::correlate_image`] takes: 8-bit gray (1 channel), gray+alpha (2), RGB (3)
//! and RGBA (4), through the `image` crate. Outputs are written whole or not at all.
use crate::error::{Error, Result};
use image::{DynamicImage, ExtendedColorType, ImageEncoder, ImageFormat, ImageReader};
use ndarray::{s, Array3, ArrayView3};
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Whether `path` has the extension of a format this module reads and writes (png,
/// jpg, jpeg, any case): what a directory batch picks up.
pub fn has_image_extension(path: &Path) -> bool {
    output_format(path).is_ok()
}

/// Checks that `path` names a format [`write_image`] writes, so a caller can refuse
/// before doing the work.
pub fn check_output_path(path: &Path) -> Result<()> {
    output_format(path).map(|_| ())
}

/// The format the extension of `path` names, for writing.
fn output_format(path: &Path) -> Result<ImageFormat> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "png" => Ok(ImageFormat::Png),
        "jpg" | "jpeg" => Ok(ImageFormat::Jpeg),
        _ => Err(Error::OutputExtension {
            path: path.to_path_buf(),
            ext: ext.to_string(),
        }),
    }
}

/// Reads a PNG or JPEG file (format from its content, else its extension) as a
/// `(height, width, channels)` array. 16-bit and float images are refused rather than
/// silently reduced to 8 bits.
pub fn read_image(path: &Path) -> Result<Array3<u8>> {
    let owned = || path.to_path_buf();
    let file = std::fs::File::open(path).map_err(|source| Error::Read { path: owned(), source })?;
    let mut reader = ImageReader::new(BufReader::new(file))
        .with_guessed_format()
        .map_err(|source| Error::Read { path: owned(), source })?;
    if reader.format().is_none() {
        match ImageFormat::from_path(path) {
            Ok(f) => reader.set_format(f),
            Err(_) => {
                return Err(Error::ImageFormat {
                    path: owned(),
                    why: "neither the content nor the extension is a known image format".into(),
                })
            }
        }
    }
    let format = reader.format().expect("set above");
    if !matches!(format, ImageFormat::Png | ImageFormat::Jpeg) {
        return Err(Error::ImageFormat {
            path: owned(),
            why: format!("{format:?}"),
        });
    }
    let img = reader.decode().map_err(|e| match e {
        image::ImageError::IoError(source) => Error::Read { path: owned(), source },
        image::ImageError::Unsupported(u) => Error::ImageFormat {
            path: owned(),
            why: u.to_string(),
        },
        other => Error::Decode {
            path: owned(),
            why: other.to_string(),
        },
    })?;
    array_from_image(img).map_err(|e| match e {
        Error::BufferPixels { pixels } => Error::PixelFormat { path: owned(), pixels },
        e => e,
    })
}

/// An `image` crate buffer (8-bit gray, gray+alpha, RGB or RGBA) as the
/// `(height, width, channels)` array the image API takes. Other pixel types are refused
/// rather than silently reduced to 8 bits.
pub fn array_from_image(img: DynamicImage) -> Result<Array3<u8>> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (channels, raw) = match img {
        DynamicImage::ImageLuma8(b) => (1, b.into_raw()),
        DynamicImage::ImageLumaA8(b) => (2, b.into_raw()),
        DynamicImage::ImageRgb8(b) => (3, b.into_raw()),
        DynamicImage::ImageRgba8(b) => (4, b.into_raw()),
        other => {
            return Err(Error::BufferPixels {
                pixels: format!("{:?}", other.color()),
            })
        }
    };
    Ok(Array3::from_shape_vec((h, w, channels), raw).expect("an 8-bit buffer holds h*w*channels bytes"))
}

/// Width, height (as the `image` crate counts them) and channels of an image array.
fn checked_dims(img: &ArrayView3<u8>) -> Result<(u32, u32, usize)> {
    crate::image::check_image_shape(img.shape())?;
    let (h, w, c) = img.dim();
    let too_large = |n: usize| Error::TooLarge {
        elements: n,
        max: u32::MAX as usize,
    };
    Ok((
        u32::try_from(w).map_err(|_| too_large(w))?,
        u32::try_from(h).map_err(|_| too_large(h))?,
        c,
    ))
}

/// A `(height, width, channels)` array (1 to 4 channels, any strides) as an `image`
/// crate buffer: gray, gray+alpha, RGB or RGBA.
pub fn image_from_array(img: &ArrayView3<u8>) -> Result<DynamicImage> {
    let (width, height, c) = checked_dims(img)?;
    let data: Vec<u8> = img.iter().copied().collect(); // row-major, whatever the strides
    const FITS: &str = "w*h*c bytes, c in 1..=4 (checked above)";
    Ok(match c {
        1 => DynamicImage::ImageLuma8(image::GrayImage::from_raw(width, height, data).expect(FITS)),
        2 => DynamicImage::ImageLumaA8(image::GrayAlphaImage::from_raw(width, height, data).expect(FITS)),
        3 => DynamicImage::ImageRgb8(image::RgbImage::from_raw(width, height, data).expect(FITS)),
        _ => DynamicImage::ImageRgba8(image::RgbaImage::from_raw(width, height, data).expect(FITS)),
    })
}

/// Writes a `(height, width, channels)` image (1 to 4 channels) as PNG or JPEG, the
/// format chosen by the extension of `path` (png, jpg, jpeg). JPEG has no alpha
/// channel: gray+alpha is written as gray and RGBA as RGB, the alpha dropped.
///
/// The file appears whole or not at all: the image is encoded into a temporary file
/// in `path`'s directory, synced, then renamed over `path`; on any error the temporary
/// file is removed and an existing `path` is left as it was.
pub fn write_image(path: &Path, img: &ArrayView3<u8>) -> Result<()> {
    let format = output_format(path)?;
    let (width, height, c) = checked_dims(img)?;
    let keep = if format == ImageFormat::Jpeg && c % 2 == 0 {
        c - 1
    } else {
        c
    };
    // Row-major, whatever the strides of `img`.
    let data: Vec<u8> = img.slice(s![.., .., ..keep]).iter().copied().collect();
    let color = match keep {
        1 => ExtendedColorType::L8,
        2 => ExtendedColorType::La8,
        3 => ExtendedColorType::Rgb8,
        _ => ExtendedColorType::Rgba8,
    };

    let write_err = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".gpuconv-").suffix(".tmp");
    #[cfg(unix)]
    {
        // tempfile's default is 0600; an image is an ordinary file (the umask applies).
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(&dir).map_err(write_err)?;
    {
        let mut out = BufWriter::new(tmp.as_file_mut());
        let encoded = match format {
            ImageFormat::Png => image::codecs::png::PngEncoder::new(&mut out).write_image(&data, width, height, color),
            _ => image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
                .write_image(&data, width, height, color),
        };
        encoded.map_err(|e| match e {
            image::ImageError::IoError(source) => write_err(source),
            other => Error::Encode {
                path: path.to_path_buf(),
                why: other.to_string(),
            },
        })?;
        out.flush().map_err(write_err)?;
    }
    tmp.as_file().sync_all().map_err(write_err)?;
    // On failure the returned temporary file is dropped, which removes it.
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(h: usize, w: usize, c: usize) -> Array3<u8> {
        Array3::from_shape_fn((h, w, c), |(y, x, k)| ((y * 31 + x * 17 + k * 71) % 256) as u8)
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn image_buffers_round_trip_and_16_bit_is_refused() {
        for c in 1..=4 {
            let img = pattern(5, 9, c);
            let buf = image_from_array(&img.view()).unwrap();
            assert_eq!(
                (buf.width(), buf.height(), buf.color().channel_count()),
                (9, 5, c as u8)
            );
            assert_eq!(array_from_image(buf).unwrap(), img, "{c} channels");
        }
        let t = pattern(4, 6, 3).permuted_axes([1, 0, 2]);
        assert_eq!(array_from_image(image_from_array(&t.view()).unwrap()).unwrap(), t);
        let deep = DynamicImage::ImageRgb16(image::ImageBuffer::new(2, 2));
        assert!(matches!(array_from_image(deep), Err(Error::BufferPixels { .. })));
        assert!(image_from_array(&Array3::<u8>::zeros((2, 2, 5)).view()).is_err());
    }

    #[test]
    fn png_round_trips_every_channel_count() {
        let dir = tempfile::tempdir().unwrap();
        for c in 1..=4 {
            let img = pattern(7, 5, c);
            let p = dir.path().join(format!("c{c}.PNG"));
            write_image(&p, &img.view()).unwrap();
            assert_eq!(read_image(&p).unwrap(), img, "{c} channels");
        }
        // A transposed (non-standard layout) view is written in its logical order.
        let img = pattern(4, 6, 3);
        let t = img.clone().permuted_axes([1, 0, 2]);
        let p = dir.path().join("t.png");
        write_image(&p, &t.view()).unwrap();
        assert_eq!(read_image(&p).unwrap(), t);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn jpeg_drops_alpha_and_keeps_a_flat_color() {
        let dir = tempfile::tempdir().unwrap();
        let mut img = Array3::from_elem((16, 16, 4), 0u8);
        img.slice_mut(s![.., .., 0]).fill(200);
        img.slice_mut(s![.., .., 1]).fill(100);
        img.slice_mut(s![.., .., 2]).fill(50);
        img.slice_mut(s![.., .., 3]).fill(7);
        let p = dir.path().join("a.jpeg");
        write_image(&p, &img.view()).unwrap();
        let back = read_image(&p).unwrap();
        assert_eq!(back.dim(), (16, 16, 3), "alpha dropped");
        for (got, want) in back.iter().zip(img.slice(s![.., .., ..3]).iter()) {
            assert!(got.abs_diff(*want) <= 3, "lossy but close: {got} vs {want}");
        }
        let p = dir.path().join("ga.jpg");
        write_image(&p, &pattern(8, 8, 2).view()).unwrap();
        assert_eq!(read_image(&p).unwrap().dim(), (8, 8, 1));
    }

    #[test]
    fn errors_name_the_file_and_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let img = pattern(3, 3, 3);
        let e = write_image(&dir.path().join("x.bmp"), &img.view()).unwrap_err();
        assert!(
            matches!(e, Error::OutputExtension { ref ext, .. } if ext == "bmp"),
            "{e}"
        );
        let e = write_image(&dir.path().join("noext"), &img.view()).unwrap_err();
        assert!(matches!(e, Error::OutputExtension { .. }), "{e}");
        let e = write_image(&dir.path().join("five.png"), &pattern(2, 2, 5).view()).unwrap_err();
        assert!(matches!(e, Error::Channels { channels: 5 }), "{e}");
        let e = write_image(&dir.path().join("none/x.png"), &img.view()).unwrap_err();
        assert!(
            matches!(e, Error::Write { .. }) && e.to_string().contains("x.png"),
            "{e}"
        );
        // The target is a directory: the rename fails, the temporary file goes.
        std::fs::create_dir(dir.path().join("d.png")).unwrap();
        let e = write_image(&dir.path().join("d.png"), &img.view()).unwrap_err();
        assert!(matches!(e, Error::Write { .. }), "{e}");
        assert!(leftovers(dir.path()).is_empty());

        let e = read_image(&dir.path().join("missing.png")).unwrap_err();
        assert!(
            matches!(e, Error::Read { .. }) && e.to_string().contains("missing.png"),
            "{e}"
        );
        let fake = dir.path().join("fake.png");
        std::fs::write(&fake, "this is not a png").unwrap();
        let e = read_image(&fake).unwrap_err();
        assert!(
            matches!(e, Error::Decode { .. }) && e.to_string().contains("fake.png"),
            "{e}"
        );
        let txt = dir.path().join("notes.txt");
        std::fs::write(&txt, "hello").unwrap();
        assert!(matches!(read_image(&txt), Err(Error::ImageFormat { .. })));
        let gif = dir.path().join("a.gif");
        std::fs::write(&gif, b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").unwrap();
        assert!(matches!(read_image(&gif), Err(Error::ImageFormat { .. })));
    }

    #[test]
    fn sixteen_bit_images_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("deep.png");
        let img = image::ImageBuffer::<image::Luma<u16>, _>::from_pixel(3, 2, image::Luma([40000u16]));
        img.save(&p).unwrap();
        let e = read_image(&p).unwrap_err();
        assert!(matches!(e, Error::PixelFormat { .. }), "{e}");
        assert!(
            e.to_string().contains("deep.png") && e.to_string().contains("16"),
            "{e}"
        );
    }

    #[test]
    fn extensions() {
        for (p, ok) in [
            ("a.png", true),
            ("b.JPG", true),
            ("c.jpeg", true),
            ("d.gif", false),
            ("e", false),
        ] {
            assert_eq!(has_image_extension(Path::new(p)), ok, "{p}");
        }
    }
}
