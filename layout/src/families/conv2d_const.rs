//! `conv2d_const` (kernels-gpu/src/conv2d_const.rs): the mask in the `__constant__` symbol
//! `MASK_2D` (textbook Fig. 7.9, `F_c`).
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_const",
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
    summary: "mask in `__constant__` `MASK_2D` (7.9)",
};

/// One thread per output in 32x8 blocks, as the CUDA C++ twin.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, BLOCK_2D, BLOCK_2D, 0)
}
