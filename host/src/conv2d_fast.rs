//! Launch shape of the fast 2D kernels (`kernels-gpu/src/conv2d_fast.rs`, same constants).
use crate::error::Result;
use crate::gpu::LaunchShape;
use crate::launch::{blocks, MAX_GRID_YZ};

/// Block: one warp across (each thread 4 outputs wide, so 128 columns), 8 threads down.
const THREADS: (u32, u32) = (32, 8);
/// Output columns per block.
const TILE_W: usize = 128;

/// Output rows per thread: must match the device's `rows_per_thread`.
fn rows_per_thread(radius: usize) -> usize {
    if radius <= 4 {
        4
    } else {
        2
    }
}

/// Halo columns staged each side: the radius rounded up to whole 16-byte groups.
fn pad(radius: usize) -> usize {
    radius.div_ceil(4) * 4
}

/// A 128 × 8·K output tile per block; shared memory holds its inputs plus the halo.
pub(crate) fn launch_shape(radius: usize, (height, width): (usize, usize)) -> Result<LaunchShape> {
    let tile_h = THREADS.1 as usize * rows_per_thread(radius);
    let shared_floats = (TILE_W + 2 * pad(radius)) * (tile_h + 2 * radius);
    Ok(LaunchShape {
        grid: (
            blocks(width, TILE_W, u32::MAX)?,
            blocks(height, tile_h, MAX_GRID_YZ)?,
            1,
        ),
        block: (THREADS.0, THREADS.1, 1),
        shared_bytes: (shared_floats * 4) as u32,
    })
}
