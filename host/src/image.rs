//! Multi-channel images: `(height, width, channels)` arrays of u8 or f32 pixels, 1 to 4
//! interleaved channels, every channel filtered with the same 2D mask (as NPP's
//! C1R/C3R/C4R). Sums are taken in f32; u8 outputs are rounded to nearest (ties to
//! even) and saturated to 0..=255.
use crate::conv::Options;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use ndarray::{Array3, ArrayView2, ArrayView3, Axis};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for f32 {}
}

/// Which pixel type an image holds (what the kernels are told).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelKind {
    /// 8-bit unsigned, what PNG and JPEG hold.
    U8,
    /// 32-bit float.
    F32,
}

/// A pixel type the image kernels take: u8 or f32.
pub trait Pixel: Copy + Default + Send + Sync + std::fmt::Debug + PartialEq + 'static + sealed::Sealed {
    /// The kind, as the kernels receive it.
    const KIND: PixelKind;
    /// The value as an f32 (what the sums are taken in).
    fn to_f32(self) -> f32;
    /// A sum stored as this type: u8 rounds to nearest (ties to even) and saturates.
    fn from_f32(v: f32) -> Self;
}

impl Pixel for u8 {
    const KIND: PixelKind = PixelKind::U8;
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn from_f32(v: f32) -> u8 {
        // NaN saturates to 0, as `cvt.rni.sat.u8.f32` does.
        if v.is_nan() {
            0
        } else {
            v.round_ties_even().clamp(0.0, 255.0) as u8
        }
    }
}

impl Pixel for f32 {
    const KIND: PixelKind = PixelKind::F32;
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(v: f32) -> f32 {
        v
    }
}

/// Most interleaved channels an image may have.
pub const MAX_CHANNELS: usize = 4;

/// Checks an image's shape: non-empty, 1 to 4 channels.
pub(crate) fn check_image_shape(shape: &[usize]) -> Result<()> {
    let (h, w, c) = (shape[0], shape[1], shape[2]);
    if h == 0 || w == 0 || c == 0 {
        return Err(Error::EmptyInput);
    }
    if c > MAX_CHANNELS {
        return Err(Error::Channels { channels: c });
    }
    Ok(())
}

impl Gpu {
    /// Correlates every channel of a `(height, width, channels)` image with the 2D `mask`
    /// (odd along both axes), ghost cells by `opts.mode`; returns a new image of the same
    /// pixel type (u8: rounded and saturated).
    pub fn correlate_image<T: Pixel>(
        &self,
        img: ArrayView3<T>,
        mask: ArrayView2<f32>,
        opts: Options,
    ) -> Result<Array3<T>> {
        self.filter_image(img, mask, opts, false)
    }

    /// As [`Gpu::correlate_image`] with the mask flipped along both axes (convolution).
    pub fn convolve_image<T: Pixel>(
        &self,
        img: ArrayView3<T>,
        mask: ArrayView2<f32>,
        opts: Options,
    ) -> Result<Array3<T>> {
        self.filter_image(img, mask, opts, true)
    }

    fn filter_image<T: Pixel>(
        &self,
        img: ArrayView3<T>,
        mask: ArrayView2<f32>,
        opts: Options,
        flip: bool,
    ) -> Result<Array3<T>> {
        check_image_shape(img.shape())?;
        // An image is a 3D array whose channel axis the mask does not cross: a
        // (ky, kx, 1) mask correlates each channel on its own.
        let m3 = mask.insert_axis(Axis(2));
        let f = img.mapv(T::to_f32);
        let out = if flip {
            self.convolve(f.view(), m3, opts)?
        } else {
            self.correlate(f.view(), m3, opts)?
        };
        Ok(out.mapv(T::from_f32))
    }
}
