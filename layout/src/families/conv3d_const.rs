//! `conv3d_const` (kernels-gpu/src/conv3d_const.rs): one thread per output, the mask in
//! the `__constant__` symbol `MASK_3D` (the MP-4 peer's `K_c`).
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_const",
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
    summary: "one thread per output, mask in `__constant__` `MASK_3D`",
};

/// One thread per output in 32x4x4 blocks, as the CUDA C++ peer.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, BLOCK_3D, BLOCK_3D, 0)
}
