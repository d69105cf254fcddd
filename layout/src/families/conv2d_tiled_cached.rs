//! `conv2d_tiled_cached` (kernels-gpu/src/conv2d_tiled_cached.rs): the block is the 32x32
//! output tile; its own inputs in shared memory, halos through the cache (Fig. 7.15).
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_tiled_cached",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Both { max: COMPILED_2D },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "block = 32x32 output tile, halos through the cache (7.15)",
};

/// A 32x32 block per 32x32 output tile, its inputs in shared memory.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, (TILE_2D, TILE_2D, 1), (TILE_2D, TILE_2D, 1), TILE_2D * TILE_2D)
}
