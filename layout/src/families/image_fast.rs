//! `image_fast` (kernels-gpu/src/image_fast.rs): pitched images of 1 to 4 interleaved
//! channels, u8 or f32, every ghost-cell mode. A row of `w` pixels is `w·C` floats; each
//! tap of the mask reads the same channel `C` floats away, so the kernel is the fast 2D
//! kernel with the channel count compiled in as the tap stride: rows stream in with
//! 16-byte copies whatever the channel count, and outputs leave 16 bytes at a time.
use crate::shape::{blocks, MAX_GRID_X};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The block and thread geometry of `conv2d_fast`, counted in floats of interleaved
/// channels: a block is a warp across (`THREADS_X`) by `THREADS_Y`, each thread one F4
/// across (`QX`), a tile `TILE_W` floats wide.
pub use super::conv2d_fast::{QX, THREADS_X, THREADS_Y, TILE_W};
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;
/// Largest compiled channel count.
pub const MAX_CHANNELS: u32 = 4;

/// Output rows per thread (as `conv2d_fast`: the arithmetic per float is the same).
#[inline]
pub const fn rows_per_thread(r: u32) -> u32 {
    super::conv2d_fast::rows_per_thread(r)
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32) -> u32 {
    THREADS_Y * rows_per_thread(r)
}

/// Halo floats staged on each side: the `r·c` floats a tap reaches, rounded up to F4s.
#[inline]
pub const fn pad(r: u32, c: u32) -> u32 {
    super::pad(r * c)
}

/// Persistent blocks where arithmetic dominates (as `conv2d_fast`).
#[inline]
pub const fn persistent(r: u32) -> bool {
    super::conv2d_fast::persistent(r)
}

/// Tiles in flight per block.
#[inline]
pub const fn stages(r: u32) -> u32 {
    super::conv2d_fast::stages(r)
}

/// Width of a staged row in floats: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32, c: u32) -> u32 {
    TILE_W + 2 * pad(r, c)
}

/// Shared floats of one tile buffer.
#[inline]
pub const fn buffer_floats(r: u32, c: u32) -> u32 {
    staged_w(r, c) * (tile_h(r) + 2 * r)
}

/// Shared floats a block needs: `stages` tile buffers.
#[inline]
pub const fn shared_floats(r: u32, c: u32) -> u32 {
    stages(r) * buffer_floats(r, c)
}

/// Blocks per SM each entry's launch bounds ask for (as `conv2d_fast`).
#[inline]
pub const fn min_blocks(r: u32) -> u32 {
    super::conv2d_fast::min_blocks(r)
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "image_fast",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: true,
    compiled_channels: Some(MAX_CHANNELS),
    separable: false,
    launch_shape,
    summary: "ours: pitched multi-channel image, channels compiled in as the tap stride, u8 or f32, every mode",
};

/// One block per 128-float x 8K-row tile, in a 1D grid (persistent radii: capped at the
/// resident blocks).
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    let floats = w as usize * p.channels as usize;
    let tiles = blocks(floats, TILE_W as usize, MAX_GRID_X)? as usize
        * blocks(h as usize, tile_h(r) as usize, MAX_GRID_X)? as usize;
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, MAX_GRID_X)?, 1, 1),
        block: (THREADS_X, THREADS_Y, 1),
        shared_bytes: shared_floats(r, p.channels) * 4,
        persistent: persistent(r),
        depth: None,
    })
}
