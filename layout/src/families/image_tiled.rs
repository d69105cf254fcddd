//! `image_tiled` (kernels-gpu/src/image_tiled.rs): the textbook's tiled 2D kernel for real
//! images (chapter 7's `wbImage_t`): it indexes `row * pitch + col`, loops over the
//! interleaved channels, and takes u8 or f32 pixels. The block is the 32x32 input tile of
//! one channel; the inner `(32-2rx)(32-2ry)` threads compute.
use super::textbook::*;
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The table row.
pub const FAMILY: Family = Family {
    name: "image_tiled",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Runtime,
    params: crate::ParamList::Conv,
    tile_limit: (input_tile_limit(TILE_2D), "the 32x32 input tile in shared memory"),
    modes: crate::family::Modes::ZeroOnly,
    batch: false,
    image: true,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "pitched multi-channel image, block = 32x32 input tile of one channel, channel loop (7.15-7.17)",
};

/// A 32x32 block per `(32-2rx) x (32-2ry)` output tile of pixels, one channel at a time.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let [rx, ry, _] = p.radius;
    let out = (out_side(TILE_2D, rx), out_side(TILE_2D, ry), 1);
    per_tile(p, (TILE_2D, TILE_2D, 1), out, TILE_2D * TILE_2D)
}
