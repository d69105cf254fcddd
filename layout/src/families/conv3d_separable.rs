//! `conv3d_separable` (kernels-gpu/src/conv3d_separable.rs): rank-1 3D masks (a row of
//! taps along x, a column along y and a pillar along z, multiplied), one pass. The
//! skeleton is `conv3d_fast`'s: a block owns a 128 x 8K column of outputs and a chunk of
//! depth, input planes stream through a ring of shared buffers (16-byte `cp.async`), and
//! each thread keeps a register patch per output plane the current input plane touches.
//! Each input plane is filtered along x into a shared buffer, then along y into the
//! thread's registers, and that filtered patch is added into the `2r+1` output-plane
//! patches through the z taps: `3(2r+1)` FMAs per output (plus the x filter of the y
//! halo rows), and the intermediates never leave the chip.
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The walk's geometry that does not depend on the tile height: `conv3d_fast`'s.
pub use super::conv3d_fast::{
    ahead, chunk_z, pad, qx, ring, staged_w, tile_w, CHUNK_Z, QX, THREADS_X, THREADS_Y, TILE_W,
};

/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;

/// Output rows per thread: each thread holds `2r+1` patches of this many rows (one per
/// output plane an input plane touches), so registers grow as `4·K·(2r+1)`.
#[inline]
pub const fn rows_per_thread(r: u32) -> u32 {
    match r {
        0 | 1 => 4,
        2 | 3 => 2,
        _ => 1,
    }
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32) -> u32 {
    THREADS_Y * rows_per_thread(r)
}

/// Rows of a staged plane: the tile and its y halos.
#[inline]
pub const fn staged_h(r: u32) -> u32 {
    tile_h(r) + 2 * r
}

/// Shared floats of one staged plane.
#[inline]
pub const fn plane_floats(r: u32) -> u32 {
    staged_w(r) * staged_h(r)
}

/// Shared floats of the x-filtered plane (the tile's width, every staged row).
#[inline]
pub const fn filtered_floats(r: u32) -> u32 {
    TILE_W * staged_h(r)
}

/// Shared floats a block needs: the ring of planes and the x-filtered plane.
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    ring(r) * plane_floats(r) + filtered_floats(r)
}

/// The fewest waves of blocks the depth split aims at (`DepthSplit::waves`): 3 at r = 1,
/// where memory dominates (H200, 512^3 with 16-byte pads: 357 / 340 / 341 us in 1 / 2 /
/// 4 waves; with sector pads 317-318 / 315-316 / 316-317 in 2 / 3 / 4), else 1: at r = 2
/// two or three waves gained nothing (344-346 / 346 / 346-348 in 1 / 2 / 3), and at r = 3
/// they add halo planes (449 / 453 / 457 with 16-byte pads).
#[inline]
pub const fn waves(r: u32) -> u32 {
    if r <= 1 {
        3
    } else {
        1
    }
}

/// Blocks per SM the launch bounds ask for.
#[inline]
pub const fn min_blocks(_r: u32) -> u32 {
    2
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_separable",
    dim: 3,
    mask: MaskLoc::Const(masks::MASK_1D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: false,
    compiled_channels: None,
    u8_only: false,
    separable: true,
    launch_shape,
    summary: "ours: rank-1 3D masks in one pass, x then y filters on chip, z through register patches",
};

/// As `conv3d_fast`: one block per (128 x 8K column, chunk of depth), the chunks re-cut
/// by the launch to fill the GPU's last wave of blocks.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    super::conv3d_fast::walk_launch(p, (TILE_W, tile_h(r)), shared_floats(r), waves(r))
}
