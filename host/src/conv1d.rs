//! 1D convolution: validation, launch shapes of every 1D variant, the ndarray API.
use crate::device_array::DeviceArray1;
use crate::error::{Error, Result};
use crate::gpu::{kernel_args, ConstMask, Gpu, LaunchShape};
use crate::launch::blocks;
use crate::Variant;
use ndarray::{Array1, ArrayView1};

/// Threads per block of the 1D textbook kernels: 1024, as in the CUDA C++ peers.
const BLOCK_1D: u32 = 1024;

/// The radius of a 1D mask, or why it is not a mask (empty, even length).
pub fn mask_radius_1d(m: &ArrayView1<f32>) -> Result<usize> {
    match m.len() {
        n if n % 2 == 1 => Ok(n / 2),
        n => Err(Error::BadMask { shape: vec![n] }),
    }
}

/// Grid, block and shared memory of a 1D variant for `len` outputs.
pub fn launch_shape_1d(variant: Variant, radius: usize, len: usize) -> Result<LaunchShape> {
    // Checks dimension and radius first (tile arithmetic below relies on it); Auto resolves.
    let variant = variant.resolve(1, radius)?;
    let one = |block: u32, shared_floats: usize| -> Result<LaunchShape> {
        Ok(LaunchShape {
            grid: (blocks(len, block as usize, u32::MAX)?, 1, 1),
            block: (block, 1, 1),
            shared_bytes: (shared_floats * 4) as u32,
            persistent: false,
        })
    };
    match variant {
        // One thread per output, nothing shared.
        Variant::Conv1dBasic | Variant::Conv1dConst => one(BLOCK_1D, 0),
        // The block's 1024 inputs plus r halo cells each side.
        Variant::Conv1dTiled => one(BLOCK_1D, BLOCK_1D as usize + 2 * radius),
        // Only the block's own inputs; halos come through L1/L2.
        Variant::Conv1dTiledCached => one(BLOCK_1D, BLOCK_1D as usize),
        Variant::Conv1dFast => crate::conv1d_fast::launch_shape(radius, len),
        v => Err(Error::WrongDimension { variant: v, dim: 1 }),
    }
}

impl Gpu {
    /// Convolves `input` (any strides) with the odd-length `mask`; returns a new array.
    /// `P[i] = Σ_j N[i - r + j] · M[j]`, with 0 outside the signal.
    pub fn conv1d(&self, input: ArrayView1<f32>, mask: ArrayView1<f32>, variant: Variant) -> Result<Array1<f32>> {
        let radius = mask_radius_1d(&mask)?;
        variant.resolve(1, radius)?;
        let n = self.upload1(input)?;
        let mut p = self.alloc1(n.len())?;
        self.conv1d_device(&n, mask, variant, &mut p)?;
        p.to_host()
    }

    /// Device-resident 1D convolution: `output` must have `input`'s length. Returns the
    /// variant that ran (what `Auto` chose). The launch is asynchronous on [`Gpu::stream`].
    pub fn conv1d_device(
        &self,
        input: &DeviceArray1,
        mask: ArrayView1<f32>,
        variant: Variant,
        output: &mut DeviceArray1,
    ) -> Result<Variant> {
        let radius = mask_radius_1d(&mask)?;
        let v = variant.resolve(1, radius)?;
        if input.len() != output.len() {
            return Err(Error::Shape(format!(
                "input has {} elements, output {}",
                input.len(),
                output.len()
            )));
        }
        let taps = mask.to_vec();
        let shape = launch_shape_1d(v, radius, input.len())?;
        let (n, p) = (input.buf.as_device_ptr(), output.buf.as_device_ptr());
        let (r, len) = (radius as u32, input.len() as u32);
        // SAFETY (every launch below): argument lists match the kernels' signatures in
        // kernels-gpu; n and p hold `len` floats, the mask holds 2r+1 taps; device
        // memory is freed only by cuMemFree on drop, which waits for pending kernels.
        match v {
            Variant::Conv1dBasic => {
                let m = self.global_mask(&taps)?;
                unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, m, p, r, len])? }
            }
            Variant::Conv1dFast => {
                self.set_const_mask(ConstMask::Mask1d, &taps)?;
                unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, p, len])? }
            }
            _ => {
                self.set_const_mask(ConstMask::Mask1d, &taps)?;
                unsafe { self.launch(&v.entry(radius), shape, kernel_args![n, p, r, len])? }
            }
        }
        Ok(v)
    }
}
