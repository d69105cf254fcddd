//! `conv1d_fast` (kernels-gpu/src/conv1d_fast.rs): compile-time radius, 4 outputs per
//! thread from a register window, tiles staged with 16-byte `cp.async`.
use crate::shape::{blocks, MAX_GRID_X};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads per block.
pub const THREADS: u32 = 256;
/// Outputs per thread (one 16-byte F4).
pub const Q: u32 = 4;
/// Outputs per block tile.
pub const TILE: u32 = THREADS * Q;
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 16;

pub use super::pad;

/// Persistent blocks (grid capped at the blocks resident at once, each looping over
/// tiles through a copy ring) where arithmetic dominates. Measured on the H200 at 2^28:
/// r = 2 and 4 run at 538/540 us with one block per tile but 608 us persistent; r = 16
/// runs at 587 us persistent but 651 us with one block per tile.
#[inline]
pub const fn persistent(r: u32) -> bool {
    r >= 8
}

/// Tiles in flight per block: a 4-deep ring when persistent, else one.
#[inline]
pub const fn stages(r: u32) -> u32 {
    if persistent(r) {
        4
    } else {
        1
    }
}

/// Blocks per SM each entry's launch bounds ask for. One-tile blocks are latency-bound
/// on their single copy: 8 resident blocks (32 registers, full occupancy) keep the
/// most bytes in flight. With the staging's border path out of line these entries took
/// 63 registers and half the blocks (709 vs 538 us at r = 2, 2^28 floats, H200); they
/// inline it and fit 32. Persistent blocks keep a ring in flight; 3 of them per SM
/// (80 registers) ran r = 16 at 603 us where 84 registers, 2 blocks, took 645.
#[inline]
pub const fn min_blocks(r: u32) -> u32 {
    if persistent(r) {
        3
    } else {
        8
    }
}

/// Shared floats of one tile buffer: the tile and its halos.
#[inline]
pub const fn buffer_floats(r: u32) -> u32 {
    TILE + 2 * pad(r)
}

/// Shared floats a block needs: `stages` tile buffers.
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    stages(r) * buffer_floats(r)
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv1d_fast",
    dim: 1,
    mask: MaskLoc::Const(masks::MASK_1D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: true,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "ours: compile-time radius, 4 outputs per thread, cp.async staging",
};

/// One block per 1024 outputs of every row (a batch of signals is `extent[1]` rows;
/// persistent radii: capped at the resident blocks, which loop over the tiles).
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.radius[0];
    let tiles = blocks(p.extent[0] as usize, TILE as usize, MAX_GRID_X)? as usize * p.extent[1] as usize;
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, MAX_GRID_X)?, 1, 1),
        block: (THREADS, 1, 1),
        shared_bytes: shared_floats(r) * 4,
        persistent: persistent(r),
        depth: None,
    })
}
