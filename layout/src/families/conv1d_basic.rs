//! `conv1d_basic` (kernels-gpu/src/conv1d_basic.rs): one thread per output, mask by pointer (7.6).
use super::textbook::*;
use crate::{Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv1d_basic",
    dim: 1,
    mask: MaskLoc::Global,
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
    summary: "one thread per output, mask by pointer (7.6)",
};

/// One thread per output in blocks of `BLOCK_1D`.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    per_tile(p, (BLOCK_1D, 1, 1), (BLOCK_1D, 1, 1), 0)
}
