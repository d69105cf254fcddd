//! Launch shape of the fast 2D kernels (`conv2d_fast_r{R}` in kernels-gpu).
use crate::error::Result;
use crate::gpu::LaunchShape;
use crate::launch::{blocks, MAX_GRID_YZ};

/// One thread per output in 32x8 blocks for now; the kernel's own file says why.
pub(crate) fn launch_shape(_radius: usize, (height, width): (usize, usize)) -> Result<LaunchShape> {
    Ok(LaunchShape {
        grid: (blocks(width, 32, u32::MAX)?, blocks(height, 8, MAX_GRID_YZ)?, 1),
        block: (32, 8, 1),
        shared_bytes: 0,
    })
}
