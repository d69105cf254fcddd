//! `image_patches` (kernels-gpu/src/image_patches.rs): pitched images of 1 to 4
//! interleaved channels, f32 or u8, through `conv2d_fast`'s tiles (staged as f32; u8
//! windows inside the image copied as bytes, 16 a copy, and widened in shared memory). A
//! row of `w` pixels is `w·C` values and each tap reads the same channel `C` values away, so a thread's 4-wide ×
//! K-tall patch of floats is 4 outputs of interleaved channels, and every input row of its
//! window (`4 + 2·pad(r, C)` floats) feeds the K output rows it touches (8 with several
//! channels, 6 at r = 4 with 2 or 3: `rows_per_thread`): where arithmetic dominates, a
//! tap load feeds up to 32 FFMAs, against
//! image_fast's 4 or 8 (its one-row patches walking down the image). Its geometry is
//! `conv2d_fast`'s at `C` channels; u8 tiles at r <= 1 have their own (`conv2d_fast::byte_ring`:
//! 8 outputs wide a thread with channels at r = 1, tiles 256 bytes across).
use super::conv2d_fast::{self as tiles, baked_min_blocks, shared_floats};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;

/// The radii at which `Auto` runs u8 images here: below `image_mma::AUTO_FROM_RADIUS`,
/// and where image_mma refuses the call, up to r = 2 (above, `image_fast`). H200,
/// 8192² × 3 u8, µs (twenty-fourth session, runs 1 and 2), image_patches against
/// image_mma and image_fast (fifteenth session): r = 1 218.2 / 230.2 / 350.8, r = 2
/// 323.2 / 288.7 / 492.5, r = 3 842.5 / 332.2 / 695.7 (from r = 3 its u8 tiles are
/// staged with 4-byte loads that wait: `stage::bytes16` takes one buffer only). Since the
/// twenty-sixth session every u8 tile at r <= 1 is staged as bytes in a ring
/// (`conv2d_fast::byte_ring`): r = 1 219.2 -> 201.3 µs (its A/B run 7); since the
/// fifty-first, 8 outputs wide a thread: 192.4 -> 173.4 (its A/B run 3).
pub const U8_AUTO_RADII: core::ops::RangeInclusive<u32> = 1..=2;
/// Largest compiled channel count.
pub const MAX_CHANNELS: u32 = 4;

// Every entry's buffers fit the blocks per SM its launch bounds ask for (its baked code's), f32 and u8.
const _: () = {
    let mut r = 0;
    while r <= MAX_RADIUS {
        let mut c = 1;
        while c <= MAX_CHANNELS {
            assert!(super::shared_fits(4 * shared_floats(r, c, 4), baked_min_blocks(r, c)));
            assert!(super::shared_fits(4 * shared_floats(r, c, 1), baked_min_blocks(r, c)));
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
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "ours: pitched image, conv2d_fast's 4xK patches over interleaved channels, every mode",
};

/// One block per 128-float × 8K-row tile (persistent radii: capped at the resident
/// blocks, which loop over the tiles in order), as `conv2d_fast`. u8 tiles of the byte
/// ring (r <= 1, persistent) are as wide or wider and as tall: blocks past their count
/// find no tile and return.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    let (floats, c, bytes) = (w as usize * p.channels as usize, p.channels, p.pixel_bytes);
    let persistent = tiles::persistent(r) || tiles::byte_ring(r, c, bytes) > 0;
    tiles::launch(tiles::tiles(floats, h, r, c)?, persistent, shared_floats(r, c, bytes))
}
