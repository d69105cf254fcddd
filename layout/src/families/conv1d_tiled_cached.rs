//! `conv1d_tiled_cached` (kernels-gpu/src/conv1d_tiled_cached.rs): tile in shared memory, halos read through L1/L2 (7.13).
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv1d_tiled_cached",
    dim: 1,
    mask: MaskLoc::Const(masks::MASK_1D),
    radii: Radii::Runtime,
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "tile in shared memory, halos read through L1/L2 (7.13)",
};

/// One thread per output in blocks of `BLOCK_1D`.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, (BLOCK_1D, 1, 1), (BLOCK_1D, 1, 1), BLOCK_1D)
}
