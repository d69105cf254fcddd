//! Convolution on the GPU, one API for 1, 2 and 3 dimensions: validation, the launch
//! shape from the family's table row, the mask upload, the launch.
//!
//! Arrays are row-major with the innermost (last) axis contiguous: a signal, a
//! `(height, width)` image, a `(depth, height, width)` volume. Masks have the same
//! number of axes and an odd length along each (`2r+1`), chosen independently.
//!
//! Two operations, each named for what it computes (SciPy's meanings):
//! - **correlate**: `P[i] = Σ_j N[i - r + j] · M[j]`, the textbook's formula, no flip.
//!   `conv`, `conv1d`, `conv2d`, `conv3d` and their `_device` forms compute this, with
//!   ghost cells 0, as the book does.
//! - **convolve**: the mask flipped along every axis first (`scipy.ndimage.convolve`).
use crate::device_array::DeviceArray;
use crate::error::{Error, Result};
use crate::gpu::{GlobalMask, Gpu, MapElement, TileMap};
use crate::{Mode, Variant};
use layout::{ConvArgs, LaunchShape, MaskLoc, Problem};
use ndarray::{Array, ArrayView, ArrayView1, ArrayView2, ArrayView3, Dimension, Ix1, Ix2, Ix3};
use std::cell::OnceCell;

/// How to run a convolution: which kernel, and what ghost cells hold.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Options {
    /// The kernel (`Auto` picks the fastest that supports the rest).
    pub variant: Variant,
    /// The ghost-cell policy.
    pub mode: Mode,
}

impl Options {
    /// `variant`, ghost cells 0.
    pub fn variant(variant: Variant) -> Options {
        Options {
            variant,
            mode: Mode::Zero,
        }
    }
    /// `Auto`, ghost cells by `mode`.
    pub fn mode(mode: Mode) -> Options {
        Options {
            variant: Variant::Auto,
            mode,
        }
    }
}

/// The radii of a mask of shape `shape` (outermost axis first), x (innermost) first as
/// the kernels take them: `[rx, ry, rz]`, 0 past the dimension. Every side must be odd.
pub fn mask_radius(shape: &[usize]) -> Result<[u32; 3]> {
    let bad = || Error::BadMask { shape: shape.to_vec() };
    if shape.is_empty() || shape.len() > 3 {
        return Err(Error::UnsupportedDimension { ndim: shape.len() });
    }
    let mut r = [0u32; 3];
    for (axis, &len) in shape.iter().rev().enumerate() {
        if len % 2 == 0 {
            return Err(bad());
        }
        r[axis] = u32::try_from(len / 2).map_err(|_| bad())?;
    }
    Ok(r)
}

/// The extents `[x, y, z]` of an array of shape `shape` (outermost first), 1 past the
/// dimension.
fn extent(shape: &[usize]) -> Result<[u32; 3]> {
    if shape.is_empty() || shape.len() > 3 {
        return Err(Error::UnsupportedDimension { ndim: shape.len() });
    }
    let mut e = [1u32; 3];
    for (axis, &len) in shape.iter().rev().enumerate() {
        e[axis] = u32::try_from(len).map_err(|_| Error::TooLarge {
            elements: len,
            max: crate::device_array::MAX_ELEMENTS,
        })?;
    }
    Ok(e)
}

/// The launch shape `variant` (`Auto` resolved, checked against the mask) has for an
/// array of shape `shape` under a mask of radii `radius` (x first): what the launch
/// uses, computed by the family's own function in `layout`.
pub fn launch_shape(variant: Variant, shape: &[usize], radius: [u32; 3]) -> Result<LaunchShape> {
    // A separable variant asked by name is asked for a rank-1 mask.
    let rank1 = variant.family().is_some_and(|f| f.separable);
    let v = variant.resolve_mask(shape.len(), radius, rank1, Mode::Zero)?;
    let family = v.family().expect("resolved");
    let problem = Problem {
        extent: extent(shape)?,
        radius,
        channels: 1,
        pixel_bytes: 4,
    };
    Ok((family.launch_shape)(&problem)?)
}

/// A validated mask: its taps in row-major order and its radii, and for a 2D or 3D mask
/// of rank 1, its 1D factors.
#[derive(Clone, Debug)]
pub(crate) struct Mask {
    /// Row-major; for a mask given by its factors ([`Mask::separable`]), made from them
    /// on first use: a separable family never reads them, and making them cost every call
    /// about 16 us at r = 32 (65 x 65 taps) on the H200 machine's host, the GPU idle.
    taps: OnceCell<Vec<f32>>,
    pub(crate) radius: [u32; 3],
    pub(crate) ndim: usize,
    /// One 1D mask per axis, x first: a 2D or 3D mask equal, tap by tap within 4 ulps
    /// per factor, to their outer product.
    factors: Option<Vec<Vec<f32>>>,
}

/// The 1D factors, x first, of a row-major mask of shape `shape` (outermost first, 2 or
/// 3 axes) of rank 1: the fibre along x through the largest tap, and along every other
/// axis the fibre through it divided by that tap; `None` unless every tap equals their
/// product within 4 ulps per factor (so that filtering one axis after the other stays
/// within the reference's tolerance of the full mask).
pub fn rank1_axes(taps: &[f32], shape: &[usize]) -> Option<Vec<Vec<f32>>> {
    if !(2..=3).contains(&shape.len()) || taps.len() != shape.iter().product::<usize>() {
        return None;
    }
    let (pivot, &big) = taps.iter().enumerate().max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))?;
    if big == 0.0 || !big.is_finite() {
        return None;
    }
    // Row-major strides, and the pivot's index along each axis (outermost first).
    let strides: Vec<usize> = (0..shape.len()).map(|a| shape[a + 1..].iter().product()).collect();
    let at: Vec<usize> = (0..shape.len()).map(|a| pivot / strides[a] % shape[a]).collect();
    let last = shape.len() - 1;
    // factors[a]: the fibre along axis a (outermost first) through the pivot.
    let factors: Vec<Vec<f64>> = (0..shape.len())
        .map(|a| {
            (0..shape[a])
                .map(|i| {
                    let t = taps[pivot - at[a] * strides[a] + i * strides[a]] as f64;
                    if a == last {
                        t
                    } else {
                        t / big as f64
                    }
                })
                .collect()
        })
        .collect();
    let ulps = 4.0 * (shape.len() - 1) as f64 * f32::EPSILON as f64;
    // Tap by tap in row-major order, each the product of its factors outermost first; by
    // loops rather than an index divided by the strides, which cost a call about 100 us of
    // host time at 65 x 65 (the GPU idle meanwhile).
    let (planes, rows) = if last == 2 {
        (shape[0], &factors[1])
    } else {
        (1, &factors[0])
    };
    let mut rows_of_taps = taps.chunks_exact(shape[last]);
    let exact = (0..planes).all(|z| {
        let fz = if last == 2 { factors[0][z] } else { 1.0 };
        rows.iter().all(|&fy| {
            let (zy, row) = (fz * fy, rows_of_taps.next().expect("as many rows as the shape"));
            (factors[last].iter().zip(row)).all(|(&fx, &m)| (zy * fx - m as f64).abs() <= ulps * (m as f64).abs())
        })
    });
    exact.then(|| {
        factors
            .iter()
            .rev()
            .map(|f| f.iter().map(|&v| v as f32).collect())
            .collect()
    })
}

impl Mask {
    /// Validates `m`; `flip` reverses every axis (convolve rather than correlate).
    pub(crate) fn new<D: Dimension>(m: ArrayView<f32, D>, flip: bool) -> Result<Mask> {
        let radius = mask_radius(m.shape())?;
        // Row-major order, any strides (a standard-layout mask copied whole: its element
        // iterator took 14 us for 65 x 65 here); reversing the row-major order reverses
        // every axis.
        let mut taps: Vec<f32> = m
            .as_slice()
            .map_or_else(|| m.iter().copied().collect(), <[f32]>::to_vec);
        if flip {
            taps.reverse();
        }
        let factors = rank1_axes(&taps, m.shape());
        Ok(Mask {
            taps: OnceCell::from(taps),
            radius,
            ndim: m.ndim(),
            factors,
        })
    }

    /// The mask that is the outer product of 1D masks (odd lengths), given outermost
    /// axis first, its factors known.
    pub(crate) fn separable<'a>(axes: &[ArrayView1<'a, f32>]) -> Result<Mask> {
        let shape: Vec<usize> = axes.iter().map(|a| a.len()).collect();
        let radius = mask_radius(&shape)?;
        Ok(Mask {
            taps: OnceCell::new(),
            radius,
            ndim: axes.len(),
            factors: Some(axes.iter().rev().map(|a| a.to_vec()).collect()),
        })
    }

    /// Whether the mask is a 2D or 3D mask of rank 1 (a separable family can run it).
    pub(crate) fn rank1(&self) -> bool {
        self.factors.is_some()
    }

    /// The 1D masks, x first, each centred in `2r+1` (zeros around): what a separable
    /// family's compiled entry of radius `r` reads.
    fn separable_taps(&self, r: u32) -> Vec<f32> {
        let factors = self.factors.as_ref().expect("a separable family runs rank-1 masks");
        let mut taps = Vec::with_capacity(factors.len() * (2 * r as usize + 1));
        for v in factors {
            let mut out = vec![0.0f32; 2 * r as usize + 1];
            let off = r as usize - v.len() / 2;
            out[off..off + v.len()].copy_from_slice(v);
            taps.extend(out);
        }
        taps
    }

    /// The taps, row-major (of a separable mask: the outer product of its factors,
    /// outermost axis first, each tap `((1·d)·c)·r`).
    pub(crate) fn taps(&self) -> &[f32] {
        self.taps.get_or_init(|| {
            let factors = self.factors.as_ref().expect("a mask without taps has factors");
            let mut taps = vec![1.0f32];
            for a in factors.iter().rev() {
                taps = taps.iter().flat_map(|&t| a.iter().map(move |&v| t * v)).collect();
            }
            taps
        })
    }

    /// The taps embedded, centred, in a mask of radius `r` on each of its first `dim`
    /// axes (zeros around): what a compiled-radius entry of a `dim`-D family reads. A
    /// batched call's mask is one element deep past `dim`, so its taps stay in order.
    fn padded(&self, r: u32, dim: usize) -> Vec<f32> {
        let k = 2 * r as usize + 1;
        let side = |axis: usize| 2 * self.radius[axis] as usize + 1;
        let (kx, ky, kz) = (side(0), side(1), side(2));
        let (nx, ny) = (k, if dim > 1 { k } else { 1 });
        let nz = if dim > 2 { k } else { 1 };
        let off = |axis: usize| {
            if axis < dim {
                (r - self.radius[axis]) as usize
            } else {
                0
            }
        };
        let (ox, oy, oz) = (off(0), off(1), off(2));
        let (taps, mut out) = (self.taps(), vec![0.0f32; nx * ny * nz]);
        for z in 0..kz {
            for y in 0..ky {
                for x in 0..kx {
                    out[((z + oz) * ny + y + oy) * nx + x + ox] = taps[(z * ky + y) * kx + x];
                }
            }
        }
        out
    }
}

impl Gpu {
    /// Correlates `input` (any strides, 1 to 3 axes) with `mask` (odd along every axis):
    /// `P[i] = Σ_j N[i - r + j] · M[j]`, ghost cells by `opts.mode`. Returns a new array.
    pub fn correlate<D: Dimension>(
        &self,
        input: ArrayView<f32, D>,
        mask: ArrayView<f32, D>,
        opts: Options,
    ) -> Result<Array<f32, D>> {
        self.on_host(input, Mask::new(mask, false)?, opts)
    }

    /// Convolves `input` with `mask`: the mask flipped along every axis, then
    /// [`Gpu::correlate`] (`scipy.ndimage.convolve` for odd masks).
    pub fn convolve<D: Dimension>(
        &self,
        input: ArrayView<f32, D>,
        mask: ArrayView<f32, D>,
        opts: Options,
    ) -> Result<Array<f32, D>> {
        self.on_host(input, Mask::new(mask, true)?, opts)
    }

    /// Device-resident [`Gpu::correlate`]: `output` must have `input`'s shape. Returns
    /// the variant that ran (what `Auto` chose). Asynchronous on [`Gpu::stream`], but
    /// where `Auto` pads on the host ([`Variant::resolve_call`]): then synchronous.
    pub fn correlate_device<D: Dimension>(
        &self,
        input: &DeviceArray<'_, D>,
        mask: ArrayView<f32, D>,
        opts: Options,
        output: &mut DeviceArray<'_, D>,
    ) -> Result<Variant> {
        self.run(input, &Mask::new(mask, false)?, opts, output)
    }

    /// Device-resident [`Gpu::convolve`].
    pub fn convolve_device<D: Dimension>(
        &self,
        input: &DeviceArray<'_, D>,
        mask: ArrayView<f32, D>,
        opts: Options,
        output: &mut DeviceArray<'_, D>,
    ) -> Result<Variant> {
        self.run(input, &Mask::new(mask, true)?, opts, output)
    }

    /// Correlates a `(height, width)` image with the separable mask `column ⊗ row` given as
    /// its two 1D masks (odd lengths): filtered along x with `row`, then along y with
    /// `column`, in one pass where the radius allows (`conv2d_separable`), else as the
    /// full 2D mask. Ghost cells by `opts.mode`.
    pub fn correlate_separable(
        &self,
        input: ArrayView2<f32>,
        column: ArrayView1<f32>,
        row: ArrayView1<f32>,
        opts: Options,
    ) -> Result<Array<f32, Ix2>> {
        self.on_host(input, Mask::separable(&[column.view(), row.view()])?, opts)
    }

    /// Device-resident [`Gpu::correlate_separable`].
    pub fn correlate_separable_device(
        &self,
        input: &DeviceArray<'_, Ix2>,
        column: ArrayView1<f32>,
        row: ArrayView1<f32>,
        opts: Options,
        output: &mut DeviceArray<'_, Ix2>,
    ) -> Result<Variant> {
        self.run(input, &Mask::separable(&[column.view(), row.view()])?, opts, output)
    }

    /// Correlates a `(depth, height, width)` volume with the separable mask
    /// `depth ⊗ column ⊗ row` given as its three 1D masks (odd lengths): filtered along x
    /// with `row`, along y with `column`, along z with `depth`, in one pass where the
    /// radius allows (`conv3d_separable`), else as the full 3D mask. Ghost cells by
    /// `opts.mode`.
    pub fn correlate_separable_3d(
        &self,
        input: ArrayView3<f32>,
        depth: ArrayView1<f32>,
        column: ArrayView1<f32>,
        row: ArrayView1<f32>,
        opts: Options,
    ) -> Result<Array<f32, Ix3>> {
        self.on_host(
            input,
            Mask::separable(&[depth.view(), column.view(), row.view()])?,
            opts,
        )
    }

    /// Device-resident [`Gpu::correlate_separable_3d`].
    pub fn correlate_separable_3d_device(
        &self,
        input: &DeviceArray<'_, Ix3>,
        depth: ArrayView1<f32>,
        column: ArrayView1<f32>,
        row: ArrayView1<f32>,
        opts: Options,
        output: &mut DeviceArray<'_, Ix3>,
    ) -> Result<Variant> {
        self.run(
            input,
            &Mask::separable(&[depth.view(), column.view(), row.view()])?,
            opts,
            output,
        )
    }

    /// The textbook's convolution (a correlation, ghost cells 0) of `input` with `mask`,
    /// on `variant`: one entry point for 1, 2 and 3 dimensions.
    pub fn conv<D: Dimension>(
        &self,
        input: ArrayView<f32, D>,
        mask: ArrayView<f32, D>,
        variant: Variant,
    ) -> Result<Array<f32, D>> {
        self.correlate(input, mask, Options::variant(variant))
    }

    /// Device-resident [`Gpu::conv`]; returns the variant that ran.
    pub fn conv_device<D: Dimension>(
        &self,
        input: &DeviceArray<'_, D>,
        mask: ArrayView<f32, D>,
        variant: Variant,
        output: &mut DeviceArray<'_, D>,
    ) -> Result<Variant> {
        self.correlate_device(input, mask, Options::variant(variant), output)
    }

    /// [`Gpu::conv`] of a signal (the 1D name kept as a thin wrapper).
    pub fn conv1d(&self, input: ArrayView1<f32>, mask: ArrayView1<f32>, variant: Variant) -> Result<Array<f32, Ix1>> {
        self.conv(input, mask, variant)
    }
    /// [`Gpu::conv`] of a `(height, width)` image.
    pub fn conv2d(&self, input: ArrayView2<f32>, mask: ArrayView2<f32>, variant: Variant) -> Result<Array<f32, Ix2>> {
        self.conv(input, mask, variant)
    }
    /// [`Gpu::conv`] of a `(depth, height, width)` volume.
    pub fn conv3d(&self, input: ArrayView3<f32>, mask: ArrayView3<f32>, variant: Variant) -> Result<Array<f32, Ix3>> {
        self.conv(input, mask, variant)
    }
    /// [`Gpu::conv_device`] of a signal.
    pub fn conv1d_device(
        &self,
        input: &DeviceArray<'_, Ix1>,
        mask: ArrayView1<f32>,
        variant: Variant,
        output: &mut DeviceArray<'_, Ix1>,
    ) -> Result<Variant> {
        self.conv_device(input, mask, variant, output)
    }
    /// [`Gpu::conv_device`] of an image.
    pub fn conv2d_device(
        &self,
        input: &DeviceArray<'_, Ix2>,
        mask: ArrayView2<f32>,
        variant: Variant,
        output: &mut DeviceArray<'_, Ix2>,
    ) -> Result<Variant> {
        self.conv_device(input, mask, variant, output)
    }
    /// [`Gpu::conv_device`] of a volume.
    pub fn conv3d_device(
        &self,
        input: &DeviceArray<'_, Ix3>,
        mask: ArrayView3<f32>,
        variant: Variant,
        output: &mut DeviceArray<'_, Ix3>,
    ) -> Result<Variant> {
        self.conv_device(input, mask, variant, output)
    }

    /// Host arrays in and out: every check that needs no GPU work first, then upload,
    /// run, download.
    pub(crate) fn on_host<D: Dimension>(
        &self,
        input: ArrayView<f32, D>,
        mask: Mask,
        opts: Options,
    ) -> Result<Array<f32, D>> {
        let dim = input.ndim();
        check_mask_dim(dim, &mask)?;
        // What is wrong with the input is reported before what the variant refuses.
        if input.is_empty() {
            return Err(Error::EmptyInput);
        }
        if opts
            .variant
            .resolve_call(dim, mask.radius, mask.rank1(), opts.mode)?
            .padded
        {
            return self.padded_on_host(input, mask, opts.mode);
        }
        let n = self.upload(input)?;
        let mut p = self.alloc(n.raw_dim())?;
        self.run(&n, &mask, opts, &mut p)?;
        p.to_host()
    }

    /// `Auto` under a mode no kernel that implements it takes the mask for: the input
    /// padded on the host by the mask's radii under `mode` ([`crate::pad::pad`]), run
    /// with zero ghost cells (which then read what the mode reads), cropped back. Device
    /// arrays come through here too (padding needs a larger buffer and a gather; one
    /// trip through the host costs less code than a pad kernel, and these are the
    /// slow, wide masks).
    fn padded_on_host<D: Dimension>(&self, input: ArrayView<f32, D>, mask: Mask, mode: Mode) -> Result<Array<f32, D>> {
        // Outermost axis first, as the array's shape.
        let by: Vec<usize> = (0..input.ndim()).rev().map(|a| mask.radius[a] as usize).collect();
        let padded = crate::pad::pad(input, &by, mode)?;
        let out = self.on_host(padded.view(), mask, Options::default())?;
        Ok(crate::pad::crop(out.view(), &by))
    }

    /// The one path to a convolution launch: checks, launch shape from the family's row,
    /// mask upload to where the family reads it, the arguments, the launch.
    fn run<D: Dimension>(
        &self,
        input: &DeviceArray<'_, D>,
        mask: &Mask,
        opts: Options,
        output: &mut DeviceArray<'_, D>,
    ) -> Result<Variant> {
        let dim = input.shape().len();
        check_mask_dim(dim, mask)?;
        if input.shape() != output.shape() {
            return Err(Error::ShapeMismatch {
                input: input.shape().to_vec(),
                output: output.shape().to_vec(),
            });
        }
        let run = opts.variant.resolve_call(dim, mask.radius, mask.rank1(), opts.mode)?;
        if run.padded {
            // Through the host, synchronously: the input padded there (`padded_on_host`).
            let got = self.padded_on_host(input.to_host()?.view(), mask.clone(), opts.mode)?;
            output.copy_from_host(got.view())?;
            return Ok(run.variant);
        }
        let v = run.variant;
        let problem = Problem {
            extent: extent(input.shape())?,
            radius: mask.radius,
            channels: 1,
            pixel_bytes: 4,
        };
        // `input` and `output`, both borrowed for this call, have the shape
        // `problem.extent` (checked above); arrays are dense (no pitch).
        let buffers = Buffers {
            input: input.addr(),
            output: output.addr(),
            pitch: 0,
            pixel: layout::args::pixel::F32,
        };
        self.launch_family(v, &problem, mask, opts.mode, buffers)?;
        Ok(v)
    }

    /// Launches family `v` (resolved and checked against the problem) on `buffers`: the
    /// launch shape from its row, its entry for the mask, the mask uploaded to where it
    /// reads it (padded for a compiled radius), the arguments.
    pub(crate) fn launch_family(
        &self,
        v: Variant,
        problem: &Problem,
        mask: &Mask,
        mode: Mode,
        buffers: Buffers,
    ) -> Result<()> {
        let family = v.family().expect("resolved");
        let shape = (family.launch_shape)(problem)?;
        let entry = family.entry_for(mask.radius, problem.channels);
        // A compiled-radius entry reads a mask of its radius on every axis of its family
        // (a batch's extra axis has radius 0).
        let (taps, radius) = match entry.radius {
            Some(r) if family.separable => {
                let mut radius = [0; 3];
                radius[..family.dim].fill(r);
                (mask.separable_taps(r), radius)
            }
            Some(r) if family.pads_mask(mask.radius) => {
                let mut radius = [0; 3];
                radius[..family.dim].fill(r);
                (mask.padded(r, family.dim), radius)
            }
            _ => (mask.taps().to_vec(), mask.radius),
        };
        let name = entry.to_string();
        // A fast entry runs in a module with these taps baked in (read from the symbol
        // where baking is off or left a load).
        let baked = match entry.baked_taps() {
            Some(sym) => self.baked(&name, sym, &taps, entry.baked_jit_level())?,
            None => None,
        };
        let code = baked.as_ref().map_or_else(|| self.main_code(), |b| b.code());
        let mask_addr = match family.mask {
            MaskLoc::Global => self.global_mask(GlobalMask::Taps, &taps)?,
            MaskLoc::MmaTable => {
                let r = entry.radius.expect("image_mma entries are compiled per radius");
                self.global_mask(GlobalMask::MmaTable(r, problem.channels.max(1)), &taps)?
            }
            MaskLoc::Const(_) if baked.is_some() => 0,
            MaskLoc::Const(sym) => {
                self.set_const_mask(sym, &taps)?;
                0
            }
        };
        let tile_map = match self.tile_map_of(family.name, entry.radius, problem, &buffers) {
            Some(m) => self.set_tile_map(code, m)?,
            None => false,
        };
        let args = ConvArgs {
            input: buffers.input,
            output: buffers.output,
            mask: mask_addr,
            tile_counter: self.tile_counter(),
            extent: problem.extent,
            radius,
            mode: mode.code(),
            fill: mode.fill(),
            pitch: buffers.pitch,
            channels: problem.channels,
            pixel: buffers.pixel,
            tile_map: tile_map as u32,
        };
        // The caller's buffers cover the problem (its contract), and the mask of
        // `radius` is where the family reads it: what `Gpu::launch` asks of its callers.
        self.launch(code, &name, family.params, shape, &args)
    }
}

/// The device memory of a launch: what the caller borrowed and checked against the
/// problem it describes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buffers {
    /// Address of the input's first element.
    pub input: u64,
    /// Address of the output's first element.
    pub output: u64,
    /// Bytes between rows (images), else 0.
    pub pitch: u32,
    /// Pixel type code (images), else f32.
    pub pixel: u32,
}

impl Gpu {
    /// The tensor map the entries of `family` at radius `r` stage their tiles, steps or
    /// planes with (`layout::tile_map::tile_box`, and `byte_tile_box` for u8 images; the
    /// 2D families, under a mode other than zero ghost cells, those inside the input),
    /// where they can: rows, planes and the first element 16-byte aligned (the tensor
    /// copies' rule).
    fn tile_map_of(&self, family: &str, r: Option<u32>, p: &Problem, b: &Buffers) -> Option<TileMap> {
        use layout::args::pixel;
        let c = p.channels.max(1);
        let (element, boxed) = match b.pixel {
            pixel::F32 => (MapElement::F32, layout::tile_map::tile_box(family, r?, c)?),
            pixel::U8 => (MapElement::U16, layout::tile_map::byte_tile_box(family, r?, c)?),
            _ => return None,
        };
        if !b.input.is_multiple_of(16) {
            return None;
        }
        let [w, h, d] = p.extent.map(u64::from);
        let cells = w * u64::from(c);
        // Dense arrays (pitch 0): rows of w floats; images: of `pitch` bytes.
        let row = if b.pitch == 0 { 4 * w } else { u64::from(b.pitch) };
        if !row.is_multiple_of(16) {
            return None;
        }
        // u8 rows in 2-byte elements: an odd row's last element takes a byte of the
        // pitch's padding (16-byte rows: there is one), which only windows across the
        // right edge hold, and those are staged by threads.
        let across = match element {
            MapElement::F32 => cells,
            MapElement::U16 => cells.div_ceil(u64::from(layout::tile_map::BYTE_ELEMENT)),
        };
        Some(TileMap {
            input: b.input,
            element,
            dims: [across, h, d],
            strides: [row, row * h],
            boxed,
        })
    }
}

/// The mask must have as many axes as the input.
fn check_mask_dim(dim: usize, mask: &Mask) -> Result<()> {
    if mask.ndim != dim {
        return Err(Error::MaskDimension {
            input: dim,
            mask: mask.ndim,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array3};

    #[test]
    fn mask_radius_reads_every_axis_x_first() {
        assert_eq!(mask_radius(&[5]).unwrap(), [2, 0, 0]);
        assert_eq!(mask_radius(&[3, 7]).unwrap(), [3, 1, 0]);
        assert_eq!(mask_radius(&[1, 3, 9]).unwrap(), [4, 1, 0]);
        for bad in [&[0usize][..], &[2], &[3, 4], &[4, 3, 3], &[3, 0]] {
            assert!(matches!(mask_radius(bad), Err(Error::BadMask { .. })), "{bad:?}");
        }
        assert!(matches!(
            mask_radius(&[3, 3, 3, 3]),
            Err(Error::UnsupportedDimension { ndim: 4 })
        ));
    }

    #[test]
    fn padding_centres_a_rectangular_mask() {
        // 1x3 (rx = 1, ry = 0) padded to radius 1: the middle row of a 3x3.
        let m = Mask::new(array![[1.0f32, 2.0, 3.0]].view(), false).unwrap();
        assert_eq!(m.padded(1, 2), vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
        // 3x1 padded to 2: the middle column of a 5x5.
        let m = Mask::new(array![[1.0f32], [2.0], [3.0]].view(), false).unwrap();
        let p = m.padded(2, 2);
        for (i, v) in p.iter().enumerate() {
            let (y, x) = (i / 5, i % 5);
            let want = if x == 2 && (1..=3).contains(&y) { y as f32 } else { 0.0 };
            assert_eq!(*v, want, "({y}, {x})");
        }
        // 3D 1x1x3 padded to 1: the centre row of the centre plane.
        let m = Mask::new(
            Array3::from_shape_vec((1, 1, 3), vec![4.0f32, 5.0, 6.0])
                .unwrap()
                .view(),
            false,
        )
        .unwrap();
        let p = m.padded(1, 3);
        assert_eq!(p.len(), 27);
        assert_eq!(&p[12..15], &[4.0, 5.0, 6.0]);
        assert_eq!(p.iter().filter(|v| **v != 0.0).count(), 3);
        // A batch of 2D filters: a (1, 1, 3) mask on a 2D family, padded to 3x3.
        assert_eq!(m.padded(1, 2), vec![0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn flip_reverses_every_axis() {
        let m = Mask::new(
            array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]].view(),
            true,
        )
        .unwrap();
        assert_eq!(m.taps(), [9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    }

    #[test]
    fn rank1_axes_finds_the_factors_of_every_tap_and_only_those() {
        // Outermost axis first, as the mask's shape; the factors come back x first.
        let axes: [&[f32]; 3] = [&[0.5, -2.0, 1.25], &[3.0, 0.0, -0.75, 1.5, 2.0], &[1.0, 7.0, -0.1]];
        for dims in [2usize, 3] {
            let ax = &axes[3 - dims..];
            let shape: Vec<usize> = ax.iter().map(|a| a.len()).collect();
            let views: Vec<ArrayView1<f32>> = ax.iter().map(|&a| ArrayView1::from(a)).collect();
            let taps = Mask::separable(&views).unwrap().taps().to_vec();
            let f = rank1_axes(&taps, &shape).expect("an outer product is of rank 1");
            assert_eq!(f.len(), dims);
            // The factors' outer product is the mask, tap by tap (within the tolerance).
            for (t, &m) in taps.iter().enumerate() {
                let (x, y, z) = (
                    t % shape[dims - 1],
                    t / shape[dims - 1] % shape[dims - 2],
                    t / (shape[dims - 1] * shape[dims - 2]),
                );
                let p = f[0][x] * f[1][y] * if dims == 3 { f[2][z] } else { 1.0 };
                assert!(
                    (p - m).abs() <= 1e-6 * m.abs().max(1e-30),
                    "{dims}D tap {t}: {p} against {m}"
                );
            }
            // One tap off by a part in 10^5 anywhere (the last row, plane and column too)
            // makes it not rank 1.
            for t in [0, taps.len() / 2, taps.len() - 1] {
                let mut off = taps.clone();
                off[t] = if off[t] == 0.0 { 1e-3 } else { off[t] * (1.0 + 1e-5) };
                assert!(rank1_axes(&off, &shape).is_none(), "{dims}D, tap {t} moved");
            }
        }
        let rank2 = [1.0f32, 2.0, 3.0, 4.0];
        assert!(rank1_axes(&rank2, &[2, 2]).is_none());
        assert!(rank1_axes(&[0.0; 9], &[3, 3]).is_none());
        assert!(rank1_axes(&[1.0; 3], &[3]).is_none());
        assert!(rank1_axes(&[1.0; 8], &[3, 3]).is_none());
    }

    #[test]
    fn a_mask_view_of_any_layout_gives_its_taps_in_row_major_order() {
        let m = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
        for v in [m.view(), m.t(), m.slice(ndarray::s![..;-1, ..])] {
            let want: Vec<f32> = v.iter().copied().collect();
            assert_eq!(Mask::new(v, false).unwrap().taps(), want.as_slice());
        }
        assert_eq!(
            Mask::new(m.t(), false).unwrap().taps(),
            [1.0, 4.0, 7.0, 2.0, 5.0, 8.0, 3.0, 6.0, 9.0]
        );
    }

    #[test]
    fn a_separable_mask_makes_its_full_taps_on_first_use() {
        let (d, c, r) = (
            array![0.5f32, 2.0, -1.0],
            array![3.0f32, -0.25, 1.5],
            array![1.0f32, 7.0, 0.1, -2.0, 4.0],
        );
        let m = Mask::separable(&[d.view(), c.view(), r.view()]).unwrap();
        assert_eq!(m.radius, [2, 1, 1]);
        // The separable families' taps need no full mask.
        assert_eq!(m.separable_taps(2)[..5], [1.0, 7.0, 0.1, -2.0, 4.0]);
        assert!(m.taps.get().is_none());
        let mut want = Vec::new();
        for &z in &d {
            for &y in &c {
                want.extend(r.iter().map(|&x| 1.0 * z * y * x));
            }
        }
        assert_eq!(m.taps(), want.as_slice());
        // Row-major, outermost axis first: tap (z, y, x) = d[z]·c[y]·r[x].
        assert_eq!(m.taps()[(2 * 3 + 1) * 5 + 3], -1.0 * -0.25 * -2.0);
    }

    #[test]
    fn launch_shapes_come_from_the_family_rows() {
        let s = launch_shape(Variant::Conv2dTiledIn, &[64, 64], [15, 15, 0]).unwrap();
        assert_eq!(s.block, (32, 32, 1));
        assert_eq!(s.grid, (32, 32, 1), "output tile 32-2*15 = 2");
        let s = launch_shape(Variant::Conv3dTiledIn, &[10, 20, 30], [1, 1, 1]).unwrap();
        assert_eq!((s.block, s.grid), ((8, 8, 8), (5, 4, 2)));
        assert!(matches!(
            launch_shape(Variant::Conv2dTiledIn, &[64, 64], [16, 16, 0]),
            Err(Error::MaskTooLarge { .. })
        ));
    }
}
