//! `conv2d_tiled_in` (kernels-gpu/src/conv2d_tiled_in.rs): the block is the 32x32 input
//! tile; all threads load, the inner `(32-2r)^2` compute (textbook Fig. 7.12).
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_tiled_in",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Both { max: COMPILED_2D },
    params: crate::ParamList::Conv,
    tile_limit: (input_tile_limit(TILE_2D), "the 32x32 input tile in shared memory"),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "block = 32x32 input tile, output tile 32-2r (7.12)",
};

/// A 32x32 block per `(32-2rx) x (32-2ry)` output tile, the input tile in shared memory.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let [rx, ry, _] = p.radius;
    let out = (out_side(TILE_2D, rx), out_side(TILE_2D, ry), 1);
    per_tile(p, (TILE_2D, TILE_2D, 1), out, TILE_2D * TILE_2D)
}
