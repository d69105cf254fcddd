//! `conv3d_tiled_cached` (kernels-gpu/src/conv3d_tiled_cached.rs): the block is the
//! 8x8x8 output tile; its own inputs in shared memory, halos read through the cache.
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_tiled_cached",
    dim: 3,
    mask: MaskLoc::Const(masks::MASK_3D),
    radii: Radii::Both { max: COMPILED_3D },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "block = 8x8x8 output tile, halos through the cache",
};

/// An 8x8x8 block per 8x8x8 output tile, its inputs in shared memory.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let side = (TILE_3D, TILE_3D, TILE_3D);
    per_tile(p, side, side, TILE_3D * TILE_3D * TILE_3D)
}
