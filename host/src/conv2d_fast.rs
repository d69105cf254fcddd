//! Launch shape of the fast 2D kernels (`kernels-gpu/src/conv2d_fast.rs`, same constants).
use crate::error::Result;
use crate::gpu::LaunchShape;
use crate::launch::blocks;

/// Block: one warp across (each thread 4 outputs wide, so 128 columns), 8 threads down.
const THREADS: (u32, u32) = (32, 8);
/// Tiles in flight per block: the device's `stages`.
fn stages(radius: usize) -> usize {
    if persistent(radius) {
        3
    } else {
        1
    }
}
/// Output columns per tile.
const TILE_W: usize = 128;

/// Output rows per thread: must match the device's `rows_per_thread`.
fn rows_per_thread(radius: usize) -> usize {
    match radius {
        0..=3 => 4,
        4 => 3,
        _ => 2,
    }
}

/// Halo columns staged each side: the radius rounded up to whole 16-byte groups.
fn pad(radius: usize) -> usize {
    radius.div_ceil(4) * 4
}

/// Tiles of 128 × 8·K outputs; one block per tile (for persistent radii the launch caps
/// the grid at the blocks resident on the GPU, which then loop over tiles). Shared memory holds
/// `stages` tiles' inputs plus halos (the pipeline's ring).
pub(crate) fn launch_shape(radius: usize, (height, width): (usize, usize)) -> Result<LaunchShape> {
    let tile_h = THREADS.1 as usize * rows_per_thread(radius);
    let shared_floats = stages(radius) * (TILE_W + 2 * pad(radius)) * (tile_h + 2 * radius);
    let tiles = blocks(width, TILE_W, u32::MAX)? as usize * blocks(height, tile_h, u32::MAX)? as usize;
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, u32::MAX)?, 1, 1),
        block: (THREADS.0, THREADS.1, 1),
        shared_bytes: (shared_floats * 4) as u32,
        persistent: persistent(radius),
    })
}

/// Whether to launch persistent blocks (grid capped at the resident blocks, each looping
/// over tiles with the copy pipeline) or one block per tile. Measured on the H200
/// (BENCHMARKS.md): persistence wins where arithmetic dominates (r >= 3: 219 vs 253 us
/// at r = 3, 8192²) and loses where memory does (r = 1: 165 vs 153 us), where the
/// hardware's own block scheduling overlaps tiles better.
fn persistent(radius: usize) -> bool {
    radius >= 3
}
