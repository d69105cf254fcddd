//! `conv1d_tiled` (kernels-gpu/src/conv1d_tiled.rs): tile plus left/right halo cells in
//! shared memory (textbook Fig. 7.11).
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv1d_tiled",
    dim: 1,
    mask: MaskLoc::Const(masks::MASK_1D),
    radii: Radii::Runtime,
    params: crate::ParamList::Conv,
    // (1024 + 2r) floats stay under the default 48 KiB up to r = 5632, past MASK_1D.
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "tile + left/right halo cells in shared memory (7.11)",
};

/// One thread per output in blocks of `BLOCK_1D`; the block's cells plus `r` halo cells
/// each side in shared memory.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, (BLOCK_1D, 1, 1), (BLOCK_1D, 1, 1), BLOCK_1D + 2 * p.radius[0])
}
