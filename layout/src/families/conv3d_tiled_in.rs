//! `conv3d_tiled_in` (kernels-gpu/src/conv3d_tiled_in.rs): the lecture's recommended MP-4
//! strategy. The block is the 8x8x8 input tile: every thread loads one cell, the inner
//! `(8-2r)^3` compute an output from shared memory.
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_tiled_in",
    dim: 3,
    mask: MaskLoc::Const(masks::MASK_3D),
    radii: Radii::Both { max: COMPILED_3D },
    params: crate::ParamList::Conv,
    tile_limit: (input_tile_limit(TILE_3D), "the 8x8x8 input tile in shared memory"),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "block = 8x8x8 input tile, output tile 8-2r (MP-4)",
};

/// An 8x8x8 block per `(8-2rx) x (8-2ry) x (8-2rz)` output tile.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let [rx, ry, rz] = p.radius;
    let out = (out_side(TILE_3D, rx), out_side(TILE_3D, ry), out_side(TILE_3D, rz));
    let side = (TILE_3D, TILE_3D, TILE_3D);
    per_tile(p, side, out, TILE_3D * TILE_3D * TILE_3D)
}
