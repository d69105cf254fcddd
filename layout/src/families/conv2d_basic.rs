//! `conv2d_basic` (kernels-gpu/src/conv2d_basic.rs): one thread per output, mask by
//! pointer (textbook Fig. 7.7).
use super::textbook::*;
use crate::{Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_basic",
    dim: 2,
    mask: MaskLoc::Global,
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
    summary: "one thread per output, mask by pointer (7.7)",
};

/// One thread per output in 32x8 blocks, as the CUDA C++ twin.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, BLOCK_2D, BLOCK_2D, 0)
}
