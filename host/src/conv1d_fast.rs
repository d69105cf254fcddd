//! Launch shape of the fast 1D kernels (`kernels-gpu/src/conv1d_fast.rs`, same constants).
use crate::error::Result;
use crate::gpu::LaunchShape;
use crate::launch::blocks;

/// Threads per block; each computes 4 consecutive outputs (one 16-byte store).
const THREADS: u32 = 256;
/// Tiles in flight per block: the device's `stages`.
fn stages(radius: usize) -> usize {
    if persistent(radius) {
        4
    } else {
        1
    }
}
/// Outputs per block.
const TILE: usize = THREADS as usize * 4;

/// Halo staged each side: the radius rounded up to whole 16-byte groups.
fn pad(radius: usize) -> usize {
    radius.div_ceil(4) * 4
}

/// One block per 1024 outputs (for persistent radii the launch caps the grid at the
/// blocks resident on the GPU, which then loop over tiles); shared memory holds `stages` tiles' inputs
/// plus halos (the pipeline's ring).
pub(crate) fn launch_shape(radius: usize, len: usize) -> Result<LaunchShape> {
    Ok(LaunchShape {
        grid: (blocks(len, TILE, u32::MAX)?, 1, 1),
        block: (THREADS, 1, 1),
        shared_bytes: (stages(radius) * (TILE + 2 * pad(radius)) * 4) as u32,
        persistent: persistent(radius),
    })
}

/// Whether to launch persistent blocks (see `conv2d_fast::persistent`). Measured on the
/// H200 at 2^28: r = 2 and 4 run at 538/540 us with one block per tile but 608 us
/// persistent; r = 16 runs at 587 us persistent but 651 us with one block per tile.
fn persistent(radius: usize) -> bool {
    radius >= 8
}
