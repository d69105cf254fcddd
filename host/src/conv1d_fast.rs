//! Launch shape of the fast 1D kernels (`conv1d_fast_r{R}` in kernels-gpu).
use crate::error::Result;
use crate::gpu::LaunchShape;
use crate::launch::blocks;

/// Threads per block.
const BLOCK: u32 = 256;

/// One thread per output for now; the kernel's own file says why.
pub(crate) fn launch_shape(_radius: usize, len: usize) -> Result<LaunchShape> {
    Ok(LaunchShape {
        grid: (blocks(len, BLOCK as usize, u32::MAX)?, 1, 1),
        block: (BLOCK, 1, 1),
        shared_bytes: 0,
    })
}
