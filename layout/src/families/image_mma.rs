//! `image_mma` (kernels-gpu/src/image_mma.rs): pitched u8 images of 1 to 4 interleaved
//! channels on the tensor cores, every ghost-cell mode. A row of a mask applied to a row
//! of interleaved pixels is a product with a Toeplitz matrix: 8 outputs of a row read
//! `8 + 2r·c` consecutive bytes, so a warp's `mma.sync.m16n8k16` (fp16 in, fp32 sums)
//! takes 16 rows × 16 input bytes (A, from shared memory with `ldmatrix`) against a
//! 16 × 8 Toeplitz block of taps (B), once per mask row and 16 input bytes. u8 pixels are
//! exact in fp16; the taps are split into two fp16 parts (hi, an integer, and lo, the
//! rest scaled by 2^11) on a grid set by the mask's sum of |taps|, so that every hi sum
//! is an exact integer in fp32 and the result keeps fp32 accuracy (README).
//!
//! A block of [`THREADS`] threads filters one [`TILE_H`] × [`TILE_W`]-byte tile: it
//! stages the tile's window as fp16 into shared memory, each warp sums a
//! [`TILE_H`] × 32-byte strip, 16 rows at a time, stores it rounded and saturated into a
//! shared output tile, and the block writes that out in words.
use crate::shape::{blocks, MAX_GRID_X};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads of a block: 8 warps side by side, each a 32-byte strip of the tile.
pub const THREADS: u32 = 256;
/// Warps of a block.
pub const WARPS: u32 = THREADS / 32;
/// Output columns (bytes of interleaved channels) of a warp's strip: 4 groups of 8.
pub const STRIP_W: u32 = 32;
/// Groups of 8 output columns per strip (the `n8` of the MMA).
pub const GROUPS: u32 = STRIP_W / 8;
/// Output tile width in bytes.
pub const TILE_W: u32 = WARPS * STRIP_W;
/// Output rows of a tile: 4 MMA row blocks of 16.
pub const TILE_H: u32 = 64;
/// Rows of an MMA block (the `m16`).
pub const MMA_M: u32 = 16;
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;
/// Largest compiled channel count.
pub const MAX_CHANNELS: u32 = 4;
/// Bytes between two rows of the shared output tile: 16 more than a row, so the 8 rows
/// a warp's fragment stores touch fall in different banks.
pub const OUT_PITCH: u32 = TILE_W + 16;
/// Bits the lo part of a tap is scaled up by (fp16 keeps 11 significant bits).
pub const LO_SHIFT: i32 = 11;
/// Power of two the mask's sum of |taps| is scaled to at most: the hi parts are integers
/// whose sum of |hi| stays below `2^15 + taps/2`, so a hi sum over u8 pixels stays below
/// 2^24 (exact in fp32) and every hi below fp16's largest finite value.
pub const SUM_BITS: i32 = 15;

/// The smallest radius at which `Auto` runs u8 images here rather than on `image_fast`.
/// H200, 8192² × 3 u8, µs, image_mma (fifteenth session, A/B run 1: the word loads at
/// r = 1, the bulk copies above) against image_fast (eleventh session, run 5): r = 1
/// 262.8 / 352.1, r = 2 459.7 / 494.1, r = 3 565.3 / 699.3, r = 4 674.4 / 924.1.
pub const AUTO_FROM_RADIUS: u32 = 1;

/// 16-input steps of the Toeplitz product per mask row: 8 outputs read `8 + 2r·c` bytes.
#[inline]
pub const fn k_steps(r: u32, c: u32) -> u32 {
    (8 + 2 * r * c).div_ceil(16)
}

/// 8-column blocks of a warp's strip its A fragments read per mask row: group `g` at
/// step `s` reads blocks `g + 2s` and `g + 2s + 1`.
#[inline]
pub const fn a_blocks(r: u32, c: u32) -> u32 {
    GROUPS + 2 * k_steps(r, c) - 1
}

/// The most [`a_blocks`] of any compiled radius and channel count.
pub const MAX_A_BLOCKS: u32 = a_blocks(MAX_RADIUS, MAX_CHANNELS);

// The last warp's A blocks end inside the window, for every compiled radius and channel
// count: the kernel's `ldmatrix` reads rely on it.
const _: () = {
    let mut r = 0;
    while r <= MAX_RADIUS {
        let mut c = 1;
        while c <= MAX_CHANNELS {
            assert!((WARPS - 1) * STRIP_W + 8 * a_blocks(r, c) <= window_w(r, c));
            assert!(a_blocks(r, c) <= MAX_A_BLOCKS);
            c += 1;
        }
        r += 1;
    }
};

/// Columns of a tile's window (shared fp16 cells): the last group's A reads
/// `16·k_steps` cells from its start.
#[inline]
pub const fn window_w(r: u32, c: u32) -> u32 {
    TILE_W - 8 + 16 * k_steps(r, c)
}

/// fp16 cells between two window rows: at least [`window_w`], and 8 more than a multiple
/// of 64 (rows 16 bytes apart modulo 128), so `ldmatrix`'s 8 rows hit distinct banks.
#[inline]
pub const fn window_pitch(r: u32, c: u32) -> u32 {
    let w = window_w(r, c);
    if w % 64 <= 8 {
        w - w % 64 + 8
    } else {
        w - w % 64 + 72
    }
}

/// Rows of a tile's window.
#[inline]
pub const fn window_rows(r: u32) -> u32 {
    TILE_H + 2 * r
}

/// 4-byte words of input a window row holds (every window column, 4 at a time).
#[inline]
pub const fn window_words(r: u32, c: u32) -> u32 {
    window_w(r, c) / 4
}

/// Shared bytes of a tile's window (fp16 cells); the output tile follows it.
#[inline]
pub const fn window_bytes(r: u32, c: u32) -> u32 {
    2 * window_rows(r) * window_pitch(r, c)
}

/// Shared bytes of the output tile; the B table follows it.
pub const OUT_BYTES: u32 = TILE_H * OUT_PITCH;

/// Bytes of the B-fragment table: per mask row and k-step, 16 bytes per lane (hi and lo,
/// 2 registers each).
#[inline]
pub const fn table_bytes(r: u32, c: u32) -> u32 {
    (2 * r + 1) * k_steps(r, c) * 32 * 16
}

/// The smallest radius whose interior tiles stage their window with 16-byte `cp.async`
/// copies of the input rows, then widen it from shared memory, rather than with word
/// loads. H200, 8192² × 3 u8 (fifteenth session, A/B run 1, µs, word loads against the
/// copies): r = 1 262.8 / 275.6, r = 2 499.5 / 459.7, r = 3 596.6 / 565.3, r = 4
/// 697.0 / 674.4.
pub const BULK_FROM_RADIUS: u32 = 2;

/// 16-byte chunks an interior tile copies of each input row of its window: the window's
/// bytes from wherever they start in a 16-byte aligned chunk.
#[inline]
pub const fn raw_chunks(r: u32, c: u32) -> u32 {
    (window_w(r, c) + 15).div_ceil(16)
}

/// Bytes between two rows of the raw window (an interior tile's input bytes as copied).
#[inline]
pub const fn raw_pitch(r: u32, c: u32) -> u32 {
    16 * raw_chunks(r, c)
}

/// Shared bytes of the raw window. It lies where the output tile and the B table go
/// (both written after it is widened).
#[inline]
pub const fn raw_bytes(r: u32, c: u32) -> u32 {
    window_rows(r) * raw_pitch(r, c)
}

/// Shared bytes of a block: the window, then the output tile and the B table, or (from
/// `BULK_FROM_RADIUS` on) the raw window in their place where it is larger.
#[inline]
pub const fn shared_bytes(r: u32, c: u32) -> u32 {
    let after = OUT_BYTES + table_bytes(r, c);
    let raw = if r >= BULK_FROM_RADIUS { raw_bytes(r, c) } else { 0 };
    window_bytes(r, c) + if raw > after { raw } else { after }
}

/// Blocks per SM the launch bounds ask for: as many as the shared memory allows (228 KiB
/// per SM, 1 KiB of it per block for the system), at most 4 (64 registers) at r <= 1 and
/// 3 (80) above, where ptxas overlaps more mask rows' A loads (one channel at r = 2
/// spilled 8 bytes at 64).
#[inline]
pub const fn min_blocks(r: u32, c: u32) -> u32 {
    let b = 228 * 1024 / (shared_bytes(r, c) + 1024);
    let most = if r <= 1 { 4 } else { 3 };
    if b > most {
        most
    } else if b < 1 {
        1
    } else {
        b
    }
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "image_mma",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: true,
    compiled_channels: Some(MAX_CHANNELS),
    u8_only: true,
    separable: false,
    launch_shape,
    summary: "ours: u8 pitched multi-channel image on the tensor cores (fp16 Toeplitz products, split taps), every mode",
};

/// One block per tile.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    let bytes = w as usize * p.channels as usize;
    let tiles = blocks(bytes, TILE_W as usize, MAX_GRID_X)? as usize * blocks(h as usize, TILE_H as usize, MAX_GRID_X)? as usize;
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, MAX_GRID_X)?, 1, 1),
        block: (THREADS, 1, 1),
        shared_bytes: shared_bytes(r, p.channels),
        persistent: false,
        depth: None,
    })
}
