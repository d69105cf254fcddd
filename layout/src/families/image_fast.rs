//! `image_fast` (kernels-gpu/src/image_fast.rs): pitched images of 1 to 4 interleaved
//! channels, u8 or f32, every ghost-cell mode. A row of `w` pixels is `w·C` floats; each
//! tap of the mask reads the same channel `C` floats away. A block owns a `TILE_W`-float
//! column of outputs and a chunk of rows and walks down it (the 3D kernels' walk along
//! depth, one dimension down): rows stream into a ring of shared slots with 16-byte
//! copies whatever the channel count, and each thread adds each input row into the
//! one-row patches of the `2r+1` output rows it touches, so taps stay constants with the
//! rows loop rolled, and outputs leave 16 bytes at a time.
use crate::shape::{blocks, MAX_GRID_X, MAX_GRID_YZ};
use crate::{masks, DepthSplit, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads of a block, all across: each thread one F4 of a row.
pub const THREADS: u32 = 256;
/// Outputs per thread across (one F4).
pub const QX: u32 = 4;
/// Output tile width of a block, in floats of interleaved channels.
pub const TILE_W: u32 = THREADS * QX;
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;
/// Largest compiled channel count.
pub const MAX_CHANNELS: u32 = 4;
/// Output rows per chunk in the grid `launch_shape` returns; the host's launch then picks
/// the chunk count for the GPU at hand (`LaunchShape::depth`).
pub const CHUNK_ROWS: u32 = 128;

/// Rows per chunk when `h` rows are cut into `gz` chunks (the launch's grid depth).
pub use super::conv3d_fast::chunk_z as chunk_rows;

/// Rows staged per step of the walk (one barrier per step): 2 where the arithmetic per
/// row is small, so that 3 blocks fit an SM (80 registers; 4 rows spill there).
#[inline]
pub const fn rows_per_step(r: u32) -> u32 {
    if r <= 1 {
        2
    } else {
        4
    }
}

/// Rows a thread adds into its patches at once, each tap loaded once for all of them (a
/// divisor of [`rows_per_step`]): 2, but 1 where two rows' windows (`4 + 2·pad(r, c)`
/// floats each) and the patches spill at 128 registers (r·c >= 12).
#[inline]
pub const fn rows_at_once(r: u32, c: u32) -> u32 {
    if r * c >= 12 {
        1
    } else {
        2
    }
}

/// Steps in flight ahead of the one being read.
#[inline]
pub const fn ahead(_r: u32) -> u32 {
    2
}

/// Shared slots: the step being read, the one read before it, and those in flight.
#[inline]
pub const fn ring(r: u32) -> u32 {
    ahead(r) + 2
}

/// Halo floats staged on each side: the `r·c` floats a tap reaches, rounded up to F4s.
#[inline]
pub const fn pad(r: u32, c: u32) -> u32 {
    super::pad(r * c)
}

/// Width of a staged row in floats: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32, c: u32) -> u32 {
    TILE_W + 2 * pad(r, c)
}

/// Shared floats of one slot (a step's rows).
#[inline]
pub const fn slot_floats(r: u32, c: u32) -> u32 {
    staged_w(r, c) * rows_per_step(r)
}

/// Shared floats of the ring of slots.
#[inline]
pub const fn shared_floats(r: u32, c: u32) -> u32 {
    ring(r) * slot_floats(r, c)
}

/// Bytes of a raw slot, where a step's u8 pixels land before they are widened into their
/// slot: a byte per staged cell, then a word per thread (its edge cell's word).
#[inline]
pub const fn raw_slot_bytes(r: u32, c: u32) -> u32 {
    slot_floats(r, c) + 4 * THREADS
}

/// Shared bytes a block needs: the ring of slots, then the ring of raw slots.
#[inline]
pub const fn shared_bytes(r: u32, c: u32) -> u32 {
    ring(r) * (4 * slot_floats(r, c) + raw_slot_bytes(r, c))
}

/// Blocks per SM each entry's launch bounds ask for: 3 (80 registers) where the
/// `4·(2r+1)` accumulators and the row's window are small, else 2 (128; one channel at
/// r = 1 spilled 4 bytes at 80).
#[inline]
pub const fn min_blocks(r: u32, c: u32) -> u32 {
    if r <= 1 && (r == 0 || c > 1) {
        3
    } else {
        2
    }
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "image_fast",
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
    summary: "ours: pitched multi-channel image, channels compiled in as the tap stride, u8 or f32, every mode",
};

/// The fewest waves of blocks the row split aims at (`DepthSplit::waves`): 4 at r <= 2,
/// where memory dominates (H200, 8192² x 3: f32 r = 2 461 -> 435 us, u8 r = 1 369 ->
/// 355, r = 2 511 -> 497), else 1 (f32 r = 4 808 -> 844 in 4 waves).
#[inline]
pub const fn waves(r: u32) -> u32 {
    if r <= 2 {
        4
    } else {
        1
    }
}

/// One block per (`TILE_W`-float column, chunk of rows): chunks of [`CHUNK_ROWS`], which
/// the launch re-cuts to fill the GPU's last wave of blocks, in at least `waves(r)` waves
/// (`depth`).
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    let floats = w as usize * p.channels as usize;
    let rows = DepthSplit {
        planes: h,
        halo: 2 * r,
        waves: waves(r),
        sides: false,
    };
    Ok(LaunchShape {
        grid: (
            blocks(floats, TILE_W as usize, MAX_GRID_X)?,
            1,
            rows.whole(blocks(h as usize, CHUNK_ROWS as usize, MAX_GRID_YZ)?),
        ),
        block: (THREADS, 1, 1),
        shared_bytes: shared_bytes(r, p.channels),
        persistent: false,
        depth: Some(rows),
    })
}
