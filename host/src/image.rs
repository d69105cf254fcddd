//! Pitched multi-channel images, the book's `wbImage_t`: width, height, pitch (bytes
//! between rows, padded as cuMemAllocPitch pads them, or the caller's), 1 to 4
//! interleaved channels of u8 or f32. Every channel is filtered with the same 2D mask
//! (NPP's C1R/C3R/C4R). Sums are taken in f32; u8 outputs are rounded to nearest (ties
//! to even) and saturated to 0..=255. Host images are `(height, width, channels)`
//! ndarray arrays.
use crate::conv::{Buffers, Mask, Options};
use crate::device_array::MAX_ELEMENTS;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::{Mode, Variant};
use cust::sys::{
    cuMemAllocPitch_v2, cuMemAlloc_v2, cuMemFree_v2, cuMemcpy2D_v2, CUdeviceptr, CUmemorytype, CUresult, CUDA_MEMCPY2D,
};
use layout::Problem;
use ndarray::{Array3, ArrayView2, ArrayView3, Axis};
use std::marker::PhantomData;

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

impl PixelKind {
    /// The code the kernels receive (`layout::args::pixel`).
    fn code(self) -> u32 {
        match self {
            PixelKind::U8 => layout::args::pixel::U8,
            PixelKind::F32 => layout::args::pixel::F32,
        }
    }
}

/// Most interleaved channels an image may have.
pub const MAX_CHANNELS: usize = 4;

/// Images take 2D masks.
fn check_mask_2d(mask: &Mask) -> Result<()> {
    if mask.ndim != 2 {
        return Err(Error::MaskDimension {
            input: 2,
            mask: mask.ndim,
        });
    }
    Ok(())
}

/// Checks an image's shape `(height, width, channels)`: non-empty, 1 to 4 channels,
/// within 32-bit indexing.
pub(crate) fn check_image_shape(shape: &[usize]) -> Result<()> {
    let (h, w, c) = (shape[0], shape[1], shape[2]);
    if h == 0 || w == 0 || c == 0 {
        return Err(Error::EmptyInput);
    }
    if c > MAX_CHANNELS {
        return Err(Error::Channels { channels: c });
    }
    let n = h.saturating_mul(w).saturating_mul(c);
    if n > MAX_ELEMENTS {
        return Err(Error::TooLarge {
            elements: n,
            max: MAX_ELEMENTS,
        });
    }
    Ok(())
}

/// A pitched image in GPU memory, `height` rows of `width · channels` pixels of type `T`,
/// `pitch` bytes apart. It borrows the [`Gpu`] whose context owns its memory.
pub struct DeviceImage<'g, T: Pixel> {
    ptr: CUdeviceptr,
    height: usize,
    width: usize,
    channels: usize,
    pitch: usize,
    _gpu: PhantomData<&'g Gpu>,
    _pixel: PhantomData<T>,
}

impl<T: Pixel> Drop for DeviceImage<'_, T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAlloc(Pitch) in the context the borrowed Gpu owns,
        // which is still alive, and nothing else frees it. cuMemFree waits for pending
        // kernels that use it. An error here (a context already broken) cannot be
        // reported from drop.
        unsafe {
            cuMemFree_v2(self.ptr);
        }
    }
}

impl<T: Pixel> DeviceImage<'_, T> {
    /// Rows.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Pixels per row.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Interleaved channels per pixel.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// Bytes between the starts of two rows.
    pub fn pitch(&self) -> usize {
        self.pitch
    }
    /// `(height, width, channels)`.
    pub fn dim(&self) -> (usize, usize, usize) {
        (self.height, self.width, self.channels)
    }
    /// Bytes of one row's pixels.
    fn row_bytes(&self) -> usize {
        self.width * self.channels * std::mem::size_of::<T>()
    }
    /// Copies back to the host as `(height, width, channels)`.
    pub fn to_host(&self) -> Result<Array3<T>> {
        let mut out = Array3::from_elem(self.dim(), T::default());
        let host = out.as_slice_mut().expect("a new array is contiguous");
        let copy = copy_2d(
            true,
            host.as_mut_ptr().cast(),
            self.ptr,
            self.pitch,
            self.row_bytes(),
            self.height,
        );
        // SAFETY: the source is this image's allocation (height rows of pitch bytes), the
        // destination a host buffer of height · row_bytes bytes; the copy is synchronous.
        check(unsafe { cuMemcpy2D_v2(&copy) }, "cuMemcpy2D", 0)?;
        Ok(out)
    }
}

/// A CUDA_MEMCPY2D with no offsets and no arrays, from host to device memory or back.
fn copy_2d(
    from_device: bool,
    host: *mut std::ffi::c_void,
    device: CUdeviceptr,
    device_pitch: usize,
    row_bytes: usize,
    height: usize,
) -> CUDA_MEMCPY2D {
    let (host_type, device_type) = (CUmemorytype::CU_MEMORYTYPE_HOST, CUmemorytype::CU_MEMORYTYPE_DEVICE);
    CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: if from_device { device_type } else { host_type },
        srcHost: host,
        srcDevice: device,
        srcArray: std::ptr::null_mut(),
        srcPitch: if from_device { device_pitch } else { row_bytes },
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: if from_device { host_type } else { device_type },
        dstHost: host,
        dstDevice: device,
        dstArray: std::ptr::null_mut(),
        dstPitch: if from_device { row_bytes } else { device_pitch },
        WidthInBytes: row_bytes,
        Height: height,
    }
}

/// A driver result as ours; `bytes` names an allocation's size for out-of-memory.
fn check(r: CUresult, call: &'static str, bytes: usize) -> Result<()> {
    match r {
        CUresult::CUDA_SUCCESS => Ok(()),
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => Err(Error::OutOfMemory { bytes }),
        r => Err(Error::Driver {
            call,
            result: format!("{r:?}"),
        }),
    }
}

impl Gpu {
    /// An uninitialized pitched image, its pitch padded by the driver (cuMemAllocPitch).
    pub fn alloc_image<T: Pixel>(&self, height: usize, width: usize, channels: usize) -> Result<DeviceImage<'_, T>> {
        check_image_shape(&[height, width, channels])?;
        let row = width * channels * std::mem::size_of::<T>();
        let (mut ptr, mut pitch): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: out-pointers to locals; the context is current (this Gpu's).
        check(
            unsafe { cuMemAllocPitch_v2(&mut ptr, &mut pitch, row, height, 16) },
            "cuMemAllocPitch",
            row * height,
        )?;
        self.image(ptr, height, width, channels, pitch)
    }

    /// An uninitialized image whose rows are `pitch` bytes apart: at least a row of
    /// pixels, a multiple of the channel size (any such pitch: the kernels take odd ones).
    pub fn alloc_image_pitched<T: Pixel>(
        &self,
        height: usize,
        width: usize,
        channels: usize,
        pitch: usize,
    ) -> Result<DeviceImage<'_, T>> {
        check_image_shape(&[height, width, channels])?;
        let size = std::mem::size_of::<T>();
        if pitch < width * channels * size || !pitch.is_multiple_of(size) {
            return Err(Error::BadPitch {
                pitch,
                width,
                bytes_per_pixel: channels * size,
            });
        }
        if (pitch / size).saturating_mul(height) > MAX_ELEMENTS {
            return Err(Error::TooLarge {
                elements: (pitch / size).saturating_mul(height),
                max: MAX_ELEMENTS,
            });
        }
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: an out-pointer to a local; the context is current (this Gpu's).
        check(
            unsafe { cuMemAlloc_v2(&mut ptr, pitch * height) },
            "cuMemAlloc",
            pitch * height,
        )?;
        self.image(ptr, height, width, channels, pitch)
    }

    /// Wraps an allocation (freed on drop), refusing pitches past 32-bit indexing.
    fn image<T: Pixel>(
        &self,
        ptr: CUdeviceptr,
        height: usize,
        width: usize,
        channels: usize,
        pitch: usize,
    ) -> Result<DeviceImage<'_, T>> {
        let img = DeviceImage {
            ptr,
            height,
            width,
            channels,
            pitch,
            _gpu: PhantomData,
            _pixel: PhantomData,
        };
        let elements = (pitch / std::mem::size_of::<T>()).saturating_mul(height);
        if elements > MAX_ELEMENTS || pitch > u32::MAX as usize {
            return Err(Error::TooLarge {
                elements,
                max: MAX_ELEMENTS,
            });
        }
        Ok(img)
    }

    /// Copies a `(height, width, channels)` image (any strides) into a new pitched image.
    pub fn upload_image<T: Pixel>(&self, img: ArrayView3<T>) -> Result<DeviceImage<'_, T>> {
        let (h, w, c) = img.dim();
        let mut d = self.alloc_image(h, w, c)?;
        self.copy_into(img, &mut d)?;
        Ok(d)
    }

    /// Copies an image into a new image whose rows are `pitch` bytes apart.
    pub fn upload_image_pitched<T: Pixel>(&self, img: ArrayView3<T>, pitch: usize) -> Result<DeviceImage<'_, T>> {
        let (h, w, c) = img.dim();
        let mut d = self.alloc_image_pitched(h, w, c, pitch)?;
        self.copy_into(img, &mut d)?;
        Ok(d)
    }

    fn copy_into<T: Pixel>(&self, img: ArrayView3<T>, d: &mut DeviceImage<'_, T>) -> Result<()> {
        let host = img.as_standard_layout();
        let slice = host.as_slice().expect("standard layout is contiguous");
        // The driver only reads the host side of a host-to-device copy.
        let copy = copy_2d(
            false,
            slice.as_ptr().cast_mut().cast(),
            d.ptr,
            d.pitch,
            d.row_bytes(),
            d.height,
        );
        // SAFETY: the source is a host buffer of height · row_bytes bytes (the image's
        // shape), the destination this image's allocation; the copy is synchronous.
        check(unsafe { cuMemcpy2D_v2(&copy) }, "cuMemcpy2D", 0)
    }

    /// Correlates every channel of `input` with the 2D `mask` (odd sides) into `output`
    /// (same shape, any pitch), ghost cells by `opts.mode`. Returns the variant that ran.
    /// Asynchronous on [`Gpu::stream`], but where no image kernel takes the call and
    /// `Auto` takes the channel planes through the host: then synchronous.
    pub fn correlate_image_device<T: Pixel>(
        &self,
        input: &DeviceImage<'_, T>,
        mask: ArrayView2<f32>,
        opts: Options,
        output: &mut DeviceImage<'_, T>,
    ) -> Result<Variant> {
        self.run_image(input, &Mask::new(mask, false)?, opts, output)
    }

    /// [`Gpu::correlate_image_device`] with the mask flipped along both axes.
    pub fn convolve_image_device<T: Pixel>(
        &self,
        input: &DeviceImage<'_, T>,
        mask: ArrayView2<f32>,
        opts: Options,
        output: &mut DeviceImage<'_, T>,
    ) -> Result<Variant> {
        self.run_image(input, &Mask::new(mask, true)?, opts, output)
    }

    /// Correlates every channel of a `(height, width, channels)` image with the 2D `mask`
    /// (odd along both axes), ghost cells by `opts.mode`; returns a new image of the same
    /// pixel type (u8: rounded and saturated).
    pub fn correlate_image<T: Pixel>(
        &self,
        img: ArrayView3<T>,
        mask: ArrayView2<f32>,
        opts: Options,
    ) -> Result<Array3<T>> {
        self.image_on_host(img, Mask::new(mask, false)?, opts)
    }

    /// As [`Gpu::correlate_image`] with the mask flipped along both axes (convolution).
    pub fn convolve_image<T: Pixel>(
        &self,
        img: ArrayView3<T>,
        mask: ArrayView2<f32>,
        opts: Options,
    ) -> Result<Array3<T>> {
        self.image_on_host(img, Mask::new(mask, true)?, opts)
    }

    fn image_on_host<T: Pixel>(&self, img: ArrayView3<T>, mask: Mask, opts: Options) -> Result<Array3<T>> {
        check_image_shape(img.shape())?;
        check_mask_2d(&mask)?;
        let v = opts
            .variant
            .resolve_image_call(mask.radius, mask.rank1(), img.dim().2 as u32, opts.mode)?;
        if !v.is_image() {
            return self.image_by_planes(img, mask, opts.mode);
        }
        let n = self.upload_image(img)?;
        let (h, w, c) = n.dim();
        let mut p = self.alloc_image(h, w, c)?;
        self.run_image(&n, &mask, opts, &mut p)?;
        p.to_host()
    }

    /// Auto's way on when no image kernel takes the mask and mode (image_fast: radii up
    /// to 4; image_tiled: zero ghost cells): each channel as a 2D f32 array through the
    /// array kernels' Auto (conv2d_fast up to radius 8, conv2d_separable for rank-1 masks
    /// up to 32, every mode; past them each plane padded on the host by the mode), then
    /// back to the pixel type as the image kernels store it.
    fn image_by_planes<T: Pixel>(&self, img: ArrayView3<T>, mask: Mask, mode: Mode) -> Result<Array3<T>> {
        let mut out = Array3::<T>::default(img.dim());
        let opts = Options {
            variant: Variant::Auto,
            mode,
        };
        for c in 0..img.dim().2 {
            let plane = img.index_axis(Axis(2), c).mapv(T::to_f32);
            let got = self.on_host(plane.view(), mask.clone(), opts)?;
            out.index_axis_mut(Axis(2), c).assign(&got.mapv(T::from_f32));
        }
        Ok(out)
    }

    fn run_image<T: Pixel>(
        &self,
        input: &DeviceImage<'_, T>,
        mask: &Mask,
        opts: Options,
        output: &mut DeviceImage<'_, T>,
    ) -> Result<Variant> {
        check_mask_2d(mask)?;
        let channels = input.channels as u32;
        let v = match opts.variant.resolve_image(mask.radius, channels, opts.mode) {
            Ok(v) => v,
            // No image kernel takes the call: `Auto` goes through the host, as
            // `correlate_image` does (every channel plane on the array kernels, padded
            // on the host where the mode needs it), synchronously.
            Err(e) if opts.variant == Variant::Auto => {
                let via = match Variant::Auto.resolve_image_call(mask.radius, mask.rank1(), channels, opts.mode) {
                    Ok(via) if !via.is_image() => via,
                    _ => return Err(e),
                };
                check_same_layout(input, output)?;
                let got = self.image_by_planes(input.to_host()?.view(), mask.clone(), opts.mode)?;
                self.copy_into(got.view(), output)?;
                return Ok(via);
            }
            Err(e) => return Err(e),
        };
        let r = mask.radius.into_iter().max().unwrap_or(0);
        let v = match (opts.variant, v) {
            // Auto runs f32 images on image_patches, which takes every call image_fast
            // takes (radii, channels, modes) and ran faster at every radius measured
            // (H200, 8192² × 3 f32, r = 1..4: 6-9%).
            (Variant::Auto, Variant::ImageFast) if T::KIND == crate::PixelKind::F32 => Variant::ImagePatches,
            // Auto runs u8 images on the tensor cores where image_mma takes the call and is
            // the faster (from its AUTO_FROM_RADIUS) ...
            (Variant::Auto, Variant::ImageFast)
                if r >= layout::families::image_mma::AUTO_FROM_RADIUS && mma_takes::<T>(mask, opts.mode).is_ok() =>
            {
                Variant::ImageMma
            }
            // ... and on image_patches at the radii where it beats image_fast.
            (Variant::Auto, Variant::ImageFast) if layout::families::image_patches::U8_AUTO_RADII.contains(&r) => {
                Variant::ImagePatches
            }
            (_, Variant::ImageMma) => {
                mma_takes::<T>(mask, opts.mode).map_err(|why| Error::ImageCallUnsupported { variant: v, why })?;
                v
            }
            _ => v,
        };
        takes_pixels::<T>(v).map_err(|why| Error::ImageCallUnsupported { variant: v, why })?;
        check_same_layout(input, output)?;
        let problem = Problem {
            extent: [input.width as u32, input.height as u32, 1],
            radius: mask.radius,
            channels: input.channels as u32,
            pixel_bytes: core::mem::size_of::<T>() as u32,
        };
        // `input` and `output`, both borrowed for this call, hold `height` rows of `width
        // · channels` pixels `pitch` bytes apart (checked at creation and above).
        let buffers = Buffers {
            input: input.ptr,
            output: output.ptr,
            pitch: input.pitch as u32,
            pixel: T::KIND.code(),
        };
        self.launch_family(v, &problem, mask, opts.mode, buffers)?;
        Ok(v)
    }
}

/// The output of an image call has the input's shape and pitch.
fn check_same_layout<T: Pixel>(input: &DeviceImage<'_, T>, output: &DeviceImage<'_, T>) -> Result<()> {
    if input.dim() != output.dim() {
        let (a, b) = (input.dim(), output.dim());
        return Err(Error::ShapeMismatch {
            input: vec![a.0, a.1, a.2],
            output: vec![b.0, b.1, b.2],
        });
    }
    if input.pitch != output.pitch {
        return Err(Error::PitchMismatch {
            input: input.pitch,
            output: output.pitch,
        });
    }
    Ok(())
}

/// Whether `v` filters `T` pixels, or why not (its family's [`layout::Pixels`]).
fn takes_pixels<T: Pixel>(v: Variant) -> std::result::Result<(), &'static str> {
    if v.takes_pixels(T::KIND) {
        return Ok(());
    }
    Err(match v.family().map(|f| f.pixels) {
        Some(layout::Pixels::U8) => "it filters u8 images only (fp16 holds u8 pixels exactly, not f32)",
        _ => "it filters f32 images only",
    })
}

/// Whether image_mma takes a call, or why not: it holds u8 pixels in fp16 and splits the
/// taps on a grid set by their sum of |taps| (summed in f32, in the kernel's order), and
/// a constant fill must be exact in that arithmetic.
fn mma_takes<T: Pixel>(mask: &Mask, mode: Mode) -> std::result::Result<(), &'static str> {
    takes_pixels::<T>(Variant::ImageMma)?;
    if !mask.taps().iter().fold(0.0f32, |s, t| s + t.abs()).is_finite() {
        return Err("the mask's sum of |taps| must be a finite f32");
    }
    if let Mode::Constant(f) = mode {
        if f.fract() != 0.0 || f.abs() > 255.0 {
            return Err("a constant fill must be an integer from -255 to 255");
        }
    }
    Ok(())
}
