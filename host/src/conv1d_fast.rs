//! Launch shape of the fast 1D kernels (`kernels-gpu/src/conv1d_fast.rs`, same constants).
use crate::error::Result;
use crate::gpu::LaunchShape;
use crate::launch::blocks;

/// Threads per block; each computes 4 consecutive outputs (one 16-byte store).
const THREADS: u32 = 256;
/// Outputs per block.
const TILE: usize = THREADS as usize * 4;

/// Halo staged each side: the radius rounded up to whole 16-byte groups.
fn pad(radius: usize) -> usize {
    radius.div_ceil(4) * 4
}

/// One block per 1024 outputs; shared memory holds those inputs plus both halos.
pub(crate) fn launch_shape(radius: usize, len: usize) -> Result<LaunchShape> {
    Ok(LaunchShape {
        grid: (blocks(len, TILE, u32::MAX)?, 1, 1),
        block: (THREADS, 1, 1),
        shared_bytes: ((TILE + 2 * pad(radius)) * 4) as u32,
    })
}
