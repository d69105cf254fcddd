//! `conv2d_fast` (kernels-gpu/src/conv2d_fast.rs): compile-time radius, each thread a
//! 4-wide x K-tall patch of outputs in registers, tiles staged with 16-byte `cp.async`.
use crate::shape::{blocks, MAX_GRID_X};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads across a block: one warp, so a warp's 16-byte loads and stores cover 512
/// contiguous bytes.
pub const THREADS_X: u32 = 32;
/// Threads down a block.
pub const THREADS_Y: u32 = 8;
/// Outputs per thread across (one F4).
pub const QX: u32 = 4;
/// Output tile width of a block.
pub const TILE_W: u32 = THREADS_X * QX;
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 8;

/// Output rows per thread: more rows share each loaded input row, but code size grows as
/// 4·K·(2r+1)² and so do registers.
#[inline]
pub const fn rows_per_thread(r: u32) -> u32 {
    match r {
        0..=3 => 4,
        4 => 3, // 4 rows need ~148 registers: one block per SM instead of two
        _ => 2,
    }
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32) -> u32 {
    THREADS_Y * rows_per_thread(r)
}

pub use super::pad;

/// Persistent blocks where arithmetic dominates (r >= 3: 219 vs 253 us at r = 3, 8192²);
/// below, one block per tile, where the hardware's block scheduling overlaps tiles
/// better (r = 1: 153 vs 165 us). Measured on the H200 (BENCHMARKS.md).
#[inline]
pub const fn persistent(r: u32) -> bool {
    r >= 3
}

/// Tiles in flight per block: a 3-deep ring when persistent, else one.
#[inline]
pub const fn stages(r: u32) -> u32 {
    if persistent(r) {
        3
    } else {
        1
    }
}

/// Width of a staged row: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32) -> u32 {
    TILE_W + 2 * pad(r)
}

/// Shared floats of one tile buffer.
#[inline]
pub const fn buffer_floats(r: u32) -> u32 {
    staged_w(r) * (tile_h(r) + 2 * r)
}

/// Shared floats a block needs: `stages` tile buffers (above 48 KiB the host opts in).
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    stages(r) * buffer_floats(r)
}

/// Blocks per SM each entry's launch bounds ask for (2 blocks = 128 registers, 4 = 64,
/// 5 = 48): what the radius needs for latency hiding.
#[inline]
pub const fn min_blocks(r: u32) -> u32 {
    match r {
        0 => 4, // a 1x1 mask: the staging's border loop is most of the code
        1 => 5,
        2 => 4,
        3 | 4 => 2,
        _ => 4,
    }
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_fast",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: true,
    image: false,
    compiled_channels: None,
    u8_only: false,
    separable: false,
    launch_shape,
    summary: "ours: compile-time radius, 4xK outputs per thread, cp.async staging",
};

/// One block per 128 x 8K tile of every plane (a batch of images is `extent[2]` planes),
/// in a 1D grid (persistent radii: capped at the resident blocks, which loop over the
/// tiles in order).
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, planes] = p.extent;
    let tiles = blocks(w as usize, TILE_W as usize, MAX_GRID_X)? as usize
        * blocks(h as usize, tile_h(r) as usize, MAX_GRID_X)? as usize
        * planes as usize;
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, MAX_GRID_X)?, 1, 1),
        block: (THREADS_X, THREADS_Y, 1),
        shared_bytes: shared_floats(r) * 4,
        persistent: persistent(r),
        depth: None,
    })
}
