//! 2D convolution: validation, launch shapes of every 2D variant, the ndarray API.
//! Images are (height, width), row-major on the device; masks square, 2r+1 a side.
use crate::device_array::DeviceArray2;
use crate::error::{Error, Result};
use crate::gpu::{kernel_args, ConstMask, Gpu, LaunchShape};
use crate::launch::{blocks, MAX_GRID_YZ};
use crate::Variant;
use ndarray::{Array2, ArrayView2};

/// Side of the 2D tiles of the textbook tiled kernels (a 32x32 block, 1024 threads).
pub const TILE_2D: usize = 32;

/// The radius of a square odd 2D mask, or why it is not one.
pub fn mask_radius_2d(m: &ArrayView2<f32>) -> Result<usize> {
    let (rows, cols) = m.dim();
    if rows != cols || rows % 2 == 0 {
        return Err(Error::BadMask {
            shape: vec![rows, cols],
        });
    }
    Ok(rows / 2)
}

/// Grid, block and shared memory of a 2D variant for a (height, width) output.
pub fn launch_shape_2d(variant: Variant, radius: usize, (height, width): (usize, usize)) -> Result<LaunchShape> {
    // Checks dimension and radius first (tile arithmetic below relies on it); Auto resolves.
    let variant = variant.resolve(2, radius)?;
    let tiles = |out_w: usize, out_h: usize, block: (u32, u32), shared_floats: usize| -> Result<LaunchShape> {
        Ok(LaunchShape {
            grid: (blocks(width, out_w, u32::MAX)?, blocks(height, out_h, MAX_GRID_YZ)?, 1),
            block: (block.0, block.1, 1),
            shared_bytes: (shared_floats * 4) as u32,
            persistent: false,
        })
    };
    match variant {
        // One thread per output in 32x8 blocks, as the CUDA C++ peers launch them.
        Variant::Conv2dBasic | Variant::Conv2dConst => tiles(32, 8, (32, 8), 0),
        // Block = 32x32 input tile; each block writes a (32-2r)^2 output tile.
        Variant::Conv2dTiledIn => {
            let out = TILE_2D - 2 * radius;
            tiles(out, out, (TILE_2D as u32, TILE_2D as u32), TILE_2D * TILE_2D)
        }
        // Block = 32x32 output tile, its own inputs in shared memory, halos from cache.
        Variant::Conv2dTiledCached => tiles(TILE_2D, TILE_2D, (TILE_2D as u32, TILE_2D as u32), TILE_2D * TILE_2D),
        Variant::Conv2dFast => crate::conv2d_fast::launch_shape(radius, (height, width)),
        v => Err(Error::WrongDimension { variant: v, dim: 2 }),
    }
}

impl Gpu {
    /// Convolves a (height, width) image (any strides) with a square odd `mask`; returns a
    /// new array. `P[y][x] = Σ N[y-r+i][x-r+j] · M[i][j]`, with 0 outside the image.
    pub fn conv2d(&self, input: ArrayView2<f32>, mask: ArrayView2<f32>, variant: Variant) -> Result<Array2<f32>> {
        let radius = mask_radius_2d(&mask)?;
        variant.resolve(2, radius)?;
        let n = self.upload2(input)?;
        let mut p = self.alloc2(n.dim())?;
        self.conv2d_device(&n, mask, variant, &mut p)?;
        p.to_host()
    }

    /// Device-resident 2D convolution: `output` must have `input`'s shape. Returns the
    /// variant that ran. The launch is asynchronous on [`Gpu::stream`].
    pub fn conv2d_device(
        &self,
        input: &DeviceArray2,
        mask: ArrayView2<f32>,
        variant: Variant,
        output: &mut DeviceArray2,
    ) -> Result<Variant> {
        let radius = mask_radius_2d(&mask)?;
        let v = variant.resolve(2, radius)?;
        if input.dim() != output.dim() {
            return Err(Error::Shape(format!(
                "input is {:?}, output {:?}",
                input.dim(),
                output.dim()
            )));
        }
        let taps: Vec<f32> = mask.iter().copied().collect(); // row-major, any strides
        let (h, w) = input.dim();
        let shape = launch_shape_2d(v, radius, (h, w))?;
        let (n, p) = (input.buf.as_device_ptr(), output.buf.as_device_ptr());
        let (r, w, h) = (radius as u32, w as u32, h as u32);
        // SAFETY (every launch below): argument lists match the kernels' signatures in
        // kernels-gpu; n and p hold w*h floats, the mask holds (2r+1)^2 taps; device
        // memory is freed only by cuMemFree on drop, which waits for pending kernels.
        // The `_r{R}` entries of the textbook kernels have the radius compiled in and drop
        // that argument, like the fast ones.
        let with_r = v.entry_takes_radius(radius);
        match v {
            Variant::Conv2dBasic => {
                let m = self.global_mask(&taps)?;
                if with_r {
                    unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, m, p, r, w, h])? }
                } else {
                    unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, m, p, w, h])? }
                }
            }
            Variant::Conv2dFast => {
                self.set_const_mask(ConstMask::Mask2d, &taps)?;
                unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, p, w, h])? }
            }
            _ => {
                self.set_const_mask(ConstMask::Mask2d, &taps)?;
                if with_r {
                    unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, p, r, w, h])? }
                } else {
                    unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, p, w, h])? }
                }
            }
        }
        Ok(v)
    }
}
