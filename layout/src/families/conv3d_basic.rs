//! `conv3d_basic` (kernels-gpu/src/conv3d_basic.rs): one thread per output, mask by
//! pointer (chapter 7's 2D kernel, one axis more).
use super::textbook::*;
use crate::{Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_basic",
    dim: 3,
    mask: MaskLoc::Global,
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
    summary: "one thread per output, mask by pointer",
};

/// One thread per output in 32x4x4 blocks, as the CUDA C++ peer.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, BLOCK_3D, BLOCK_3D, 0)
}
