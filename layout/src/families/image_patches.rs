//! `image_patches` (kernels-gpu/src/image_patches.rs): pitched f32 images of 1 to 4
//! interleaved channels through `conv2d_fast`'s tiles. A row of `w` pixels is `w·C`
//! floats and each tap reads the same channel `C` floats away, so a thread's 4-wide ×
//! K-tall patch of floats is 4 outputs of interleaved channels, and every input row of its
//! window (`4 + 2·pad(r, C)` floats) feeds the K output rows it touches (8 with several
//! channels): where arithmetic dominates, a tap load feeds up to 32 FFMAs, against
//! image_fast's 4 or 8 (its one-row patches walking down the image). Its geometry is
//! `conv2d_fast`'s at `C` channels.
use super::conv2d_fast::{self as tiles, min_blocks, shared_floats};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;
/// Largest compiled channel count.
pub const MAX_CHANNELS: u32 = 4;

// Every entry's buffers fit the blocks per SM its launch bounds ask for.
const _: () = {
    let mut r = 0;
    while r <= MAX_RADIUS {
        let mut c = 1;
        while c <= MAX_CHANNELS {
            assert!(super::shared_fits(4 * shared_floats(r, c), min_blocks(r, c)));
            c += 1;
        }
        r += 1;
    }
};

/// The table row.
pub const FAMILY: Family = Family {
    name: "image_patches",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: true,
    compiled_channels: Some(MAX_CHANNELS),
    pixels: crate::family::Pixels::F32,
    separable: false,
    launch_shape,
    summary: "ours: pitched f32 image, conv2d_fast's 4xK patches over interleaved channels, every mode",
};

/// One block per 128-float × 8K-row tile (persistent radii: capped at the resident
/// blocks, which loop over the tiles in order), as `conv2d_fast`.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    let floats = w as usize * p.channels as usize;
    tiles::launch(tiles::tiles(floats, h, r, p.channels)?, r, p.channels)
}
