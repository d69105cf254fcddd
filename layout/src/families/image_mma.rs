//! `image_mma` (kernels-gpu/src/image_mma.rs): pitched u8 images of 1 to 4 interleaved
//! channels on the tensor cores, every ghost-cell mode. A row of a mask applied to a row
//! of one channel's pixels is a product with a Toeplitz matrix: 8 outputs of a row read
//! `8 + 2r` consecutive pixels, so a warp's `mma.sync.m16n8k16` (fp16 in, fp32 sums)
//! takes 16 rows × 16 pixels (A, from shared memory with `ldmatrix`) against a 16 × 8
//! Toeplitz block of taps (B), once per mask row. u8 pixels are exact in fp16; the taps
//! are split into two fp16 parts (hi, an integer, and lo, the rest scaled by 2^11) on a
//! grid set by the mask's sum of |taps|, so that every hi sum is an exact integer in fp32
//! and the result keeps fp32 accuracy (README).
//!
//! The window is staged planar, one fp16 plane per channel: in interleaved bytes the taps
//! of one channel lie `c` bytes apart, so 8 outputs read `8 + 2r·c` bytes and took
//! `⌈(8 + 2r·c) / 16⌉` MMA steps a mask row (2 at c = 3, r ≥ 2), where a plane takes one
//! for every r ≤ 4.
//!
//! A block of [`threads`] threads filters one [`tile_h`] × [`TILE_PX`]-pixel tile: it
//! stages the tile's window into shared memory, its warps sum [`MMA_M`] × [`STRIP_PX`]
//! units of one channel (every warp as many), store them rounded and saturated into a
//! shared output tile of interleaved bytes, and the block writes that out.
//!
//! At r = 1, 2 the entries take the integer path instead ([`imma`]): s8 taps × u8 pixels
//! over the interleaved bytes as a tensor copy lands them, persistent blocks taking tiles
//! from a counter into a ring.
use crate::shape::{blocks, MAX_GRID_X};
use crate::{Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Whether a tile is 32 rows high and its block 128 threads, rather than 64 and 256: at
/// r = 1, 2, every channel count (the channel count is the geometry functions' second
/// argument; it no longer decides here). Smaller blocks, twice as many, wait out their
/// windows' loads in parallel. H200, 8192² × 3 u8, µs: every entry small (sixteenth
/// session, run 6) r = 1 258.8 -> 244.4, r = 2 340.0 -> 321.7, r = 3 348.6 -> 353.0,
/// r = 4 412.8 -> 429.7; small at r = 1 and at r = 2 from three channels (eighteenth
/// session, A/B run 1) r = 1 258.8 -> 243.0, r = 2 336.2 -> 321.2, r = 3 347.4 -> 349.4,
/// r = 4 411.3 -> 410.9. One and two channels at r = 2 joined when the blocks stopped
/// building the B table (with 64-row tiles ptxas then spilled 4 bytes at one channel);
/// not timed there.
#[inline]
pub const fn small_tiles(r: u32, _c: u32) -> bool {
    r == 1 || r == 2
}

/// Threads of a block.
#[inline]
pub const fn threads(r: u32, c: u32) -> u32 {
    if small_tiles(r, c) {
        128
    } else {
        256
    }
}

/// Warps of a block.
#[inline]
pub const fn warps(r: u32, c: u32) -> u32 {
    threads(r, c) / 32
}
/// Output pixels (of one channel) of a unit: 4 groups of 8.
pub const STRIP_PX: u32 = 32;
/// Groups of 8 output pixels per unit (the `n8` of the MMA).
pub const GROUPS: u32 = STRIP_PX / 8;
/// Output rows of a tile: 4 MMA row blocks of 16, or 2 for [`small_tiles`].
#[inline]
pub const fn tile_h(r: u32, c: u32) -> u32 {
    if small_tiles(r, c) {
        32
    } else {
        64
    }
}
/// Rows of an MMA block (the `m16`) and of a unit.
pub const MMA_M: u32 = 16;
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;
/// Largest compiled channel count.
pub const MAX_CHANNELS: u32 = 4;
/// Bits the lo part of a tap is scaled up by (fp16 keeps 11 significant bits).
pub const LO_SHIFT: i32 = 11;
/// Power of two the mask's sum of |taps| is scaled to at most: the hi parts are integers
/// whose sum of |hi| stays below `2^15 + taps/2`, so a hi sum over u8 pixels stays below
/// 2^24 (exact in fp32) and every hi below fp16's largest finite value.
pub const SUM_BITS: i32 = 15;
/// 8-pixel blocks a unit's A fragments read per mask row: group `g` reads blocks `g`
/// and `g + 1` (16 pixels: 8 outputs need `8 + 2r <= 16`).
pub const A_BLOCKS: u32 = GROUPS + 1;

// One 16-pixel MMA step covers every compiled radius.
const _: () = assert!(8 + 2 * MAX_RADIUS <= 16);

/// The smallest radius at which `Auto` runs u8 images here (below: `image_patches`).
/// H200, 8192² × 3 u8, µs, image_mma (sixteenth session, A/B run 2, planar windows)
/// against image_fast (fifteenth session, run 4): r = 1 258.7 / 350.8, r = 2
/// 338.3 / 492.5, r = 3 346.8 / 695.7, r = 4 411.4 / 921.1. Against image_patches'
/// u8 tiles (twenty-fourth session, runs 1 and 2): r = 1 230.2 / 218.2, r = 2
/// 288.7 / 323.2.
pub const AUTO_FROM_RADIUS: u32 = 2;

/// Pixels of a tile row, at every channel count: a tile has `c` units per warp (at 128
/// pixels and one channel, ptxas spilled the loop over 2 units at r = 2 and 4, at 80 and
/// 64 registers).
pub const TILE_PX: u32 = 64;

/// Output bytes of a tile row (interleaved channels).
#[inline]
pub const fn tile_bytes(c: u32) -> u32 {
    TILE_PX * c
}

/// Units of a tile: channels × strips × row blocks.
#[inline]
pub const fn units(r: u32, c: u32) -> u32 {
    c * (TILE_PX / STRIP_PX) * (tile_h(r, c) / MMA_M)
}

/// fp16 cells of a window plane row: the last unit's last A block ends 8 pixels past the
/// tile (`A_BLOCKS`), which covers the `r` pixels on each side.
pub const WINDOW_W: u32 = TILE_PX + 8;

/// fp16 cells between two window rows: at least [`WINDOW_W`], and 8 more than a multiple
/// of 64 (rows 16 bytes apart modulo 128), so `ldmatrix`'s 8 rows hit distinct banks.
pub const WINDOW_PITCH: u32 = if WINDOW_W % 64 <= 8 {
    WINDOW_W - WINDOW_W % 64 + 8
} else {
    WINDOW_W - WINDOW_W % 64 + 72
};

/// Rows of a tile's window.
#[inline]
pub const fn window_rows(r: u32, c: u32) -> u32 {
    tile_h(r, c) + 2 * r
}

/// 4-pixel quads of a window row: the staging's unit of work (`4c` input bytes, a word of
/// 4 fp16 cells in each plane).
pub const WINDOW_QUADS: u32 = WINDOW_W / 4;

/// Shared bytes of one channel's window plane.
#[inline]
pub const fn plane_bytes(r: u32, c: u32) -> u32 {
    2 * window_rows(r, c) * WINDOW_PITCH
}

/// Shared bytes of a tile's window (every plane); the output tile follows it.
#[inline]
pub const fn window_bytes(r: u32, c: u32) -> u32 {
    c * plane_bytes(r, c)
}

/// Bytes between two rows of the shared output tile: 16 more than a row, so that the
/// rows a warp's fragment stores touch spread over the banks.
#[inline]
pub const fn out_pitch(c: u32) -> u32 {
    tile_bytes(c) + 16
}

/// Shared bytes of the output tile.
#[inline]
pub const fn out_bytes(r: u32, c: u32) -> u32 {
    tile_h(r, c) * out_pitch(c)
}

/// Bytes of the B-fragment table: per mask row, 16 bytes per lane (hi and lo, 2
/// registers each).
#[inline]
pub const fn table_bytes(r: u32) -> u32 {
    (2 * r + 1) * 32 * 16
}

/// Bytes of the table buffer the host builds for a launch (`ConvArgs::mask` points at
/// it; [`MaskLoc::MmaTable`](crate::MaskLoc::MmaTable)): the B table, entry `e` = `dy·32 + lane` at byte `16e`
/// ([`entry_taps`]), then 16 bytes: `2^-s` (f32) and three zero words. Every block copies
/// it whole into its shared memory.
#[inline]
pub const fn table_buffer_bytes(r: u32) -> u32 {
    table_bytes(r) + 16
}

/// The taps (row-major indices into the `(2r+1)²` mask) of the four fp16 slots of table
/// entry `e`, lane `l = e % 32` of mask row `dy = e / 32`, in the `mma.sync.m16n8k16`
/// B-fragment layout: with `g = l / 4`, `k = 2(l % 4)`, slots `B[k][g]`, `B[k + 1][g]`,
/// `B[k + 8][g]`, `B[k + 9][g]`, where `B[k][n]` is tap `(dy, k - n)` for
/// `0 <= k - n <= 2r` (output pixel `n` of 8 reads window pixel `k = n + dx`), else 0
/// (`None`). The entry's 4 words: hi parts of slots 0 | 1 << 16, 2 | 3 << 16, then the lo
/// parts likewise (`split`).
#[inline]
pub const fn entry_taps(r: u32, e: u32) -> [Option<u32>; 4] {
    let (taps, dy, l) = (2 * r + 1, e / 32, e % 32);
    let (g, k) = (l / 4, 2 * (l % 4));
    let ks = [k, k + 1, k + 8, k + 9];
    let mut out = [None; 4];
    let mut i = 0;
    while i < 4 {
        if ks[i] >= g && ks[i] - g <= 2 * r {
            out[i] = Some(dy * taps + ks[i] - g);
        }
        i += 1;
    }
    out
}

/// The exponent `s` the taps are scaled by: the largest with `sum·2^s <= 2^SUM_BITS`
/// (`sum` the mask's sum of |taps|, finite), kept where `2^s` and `2^-s` are normal
/// floats (a sum below 2^-112 leaves every u8 output 0 either way).
#[inline]
pub const fn scale_exponent(sum: f32) -> i32 {
    if sum == 0.0 {
        return 0;
    }
    // sum in [2^e, 2^(e+1)): sum·2^(SUM_BITS - 1 - e) in [2^(SUM_BITS-1), 2^SUM_BITS).
    let e = ((sum.to_bits() >> 23) & 0xff) as i32 - 127;
    let s = SUM_BITS - 1 - e;
    if s < -126 {
        -126
    } else if s > 126 {
        126
    } else {
        s
    }
}

/// 2^e as f32, for `-126 <= e <= 127`: the taps' scale `2^s` and its inverse, and the lo
/// parts' `2^LO_SHIFT` (the host builds the table with them, the device scales back).
#[inline]
pub const fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// Where a block's copy of the table lies in its shared memory: after the window and
/// the output tile (or the raw window, where larger): the copy is issued before the
/// window is staged, so it shares no bytes with what the staging writes.
#[inline]
pub const fn table_offset(r: u32, c: u32) -> u32 {
    let raw = if r >= BULK_FROM_RADIUS { raw_bytes(r, c) } else { 0 };
    let out = out_bytes(r, c);
    window_bytes(r, c) + if raw > out { raw } else { out }
}

// The last unit's A blocks end inside the window; the window planes stay 16-byte
// aligned, and their rows hold whole quads.
const _: () = assert!(TILE_PX - STRIP_PX + 8 * A_BLOCKS <= WINDOW_W);
const _: () = assert!(plane_bytes(0, 1).is_multiple_of(16) && WINDOW_W.is_multiple_of(4));

// Per channel count: the output tile's rows stay 16-byte aligned; every warp sums as many
// units; every thread of the block writes as many 16-byte pieces of a whole tile.
const _: () = {
    let mut c = 1;
    while c <= MAX_CHANNELS {
        assert!(out_pitch(c).is_multiple_of(16));
        let mut r = 0;
        while r <= MAX_RADIUS {
            assert!(units(r, c).is_multiple_of(warps(r, c)));
            assert!((tile_h(r, c) * tile_bytes(c) / 16).is_multiple_of(threads(r, c)));
            r += 1;
        }
        c += 1;
    }
};

/// The smallest radius whose interior tiles stage their window with 16-byte `cp.async`
/// copies of the input rows, then widen it from shared memory, rather than with word
/// loads. H200, 8192² × 3 u8, µs, word loads against the copies: interleaved windows
/// (fifteenth session, A/B run 1) r = 1 262.8 / 275.6, r = 2 499.5 / 459.7, r = 3
/// 596.6 / 565.3, r = 4 697.0 / 674.4; planar (sixteenth session, A/B run 2) r = 1
/// 258.7 / 279.1; planar, 32-row tiles at r = 1, 2 and the host's B table (eighteenth
/// session, A/B run 7, word loads from r = 1, 2, 3 on) r = 1 240.7 / 232.7 / 233.4,
/// r = 2 299.1 / 300.9 / 291.9, r = 3, 4 within 0.3%.
pub const BULK_FROM_RADIUS: u32 = 3;

/// 16-byte chunks an interior tile copies of each input row of its window: the window's
/// bytes from wherever they start in a 16-byte aligned chunk, and the word after them
/// (a quad's aligned loads read up to 4 bytes past its own).
#[inline]
pub const fn raw_chunks(c: u32) -> u32 {
    (WINDOW_W * c + 19).div_ceil(16)
}

/// Bytes between two rows of the raw window (an interior tile's input bytes as copied).
#[inline]
pub const fn raw_pitch(c: u32) -> u32 {
    16 * raw_chunks(c)
}

/// Shared bytes of the raw window. It lies where the output tile goes (written after it
/// is widened).
#[inline]
pub const fn raw_bytes(r: u32, c: u32) -> u32 {
    window_rows(r, c) * raw_pitch(c)
}

/// Shared bytes of a block: the window, then the output tile or (from
/// `BULK_FROM_RADIUS` on) the raw window in its place where larger, then the table.
#[inline]
pub const fn shared_bytes(r: u32, c: u32) -> u32 {
    if imma(r) {
        return imma_shared_bytes(r, c);
    }
    table_offset(r, c) + table_buffer_bytes(r)
}

/// Blocks per SM the launch bounds ask for: as many as the shared memory allows (228 KiB
/// per SM, 1 KiB of it per block for the system), at most 4 (64 registers) at r = 0 and
/// at r >= 3 from two channels on, 3 (80) elsewhere, where ptxas overlaps more mask
/// rows' A loads (at 64 registers it spilled 4-104 bytes). H200, 8192² × 3 u8, r = 3
/// (sixteenth session, A/B run 2): 4 blocks 346.8 µs, 3 blocks 381.1 (run 1).
#[inline]
pub const fn min_blocks(r: u32, c: u32) -> u32 {
    if imma(r) {
        // The A fragments (60 registers at r = 2) stay in registers: 128 a thread.
        return 4;
    }
    let b = super::SM_SHARED_BYTES / (shared_bytes(r, c) + 1024);
    // 32 or 24 warps per SM, in blocks of either size.
    let most = if r == 0 || (r >= 3 && c >= 2) { 32 } else { 24 } / warps(r, c);
    if b > most {
        most
    } else if b < 1 {
        1
    } else {
        b
    }
}

// ---------------------------------------------------------------------------------------
// The integer path at r = 1, 2 ([`imma`]).

/// Whether radius `r` runs on the integer tensor cores over the interleaved bytes as they
/// are (`mma.sync.m16n8k32`, s8 taps × u8 pixels, s32 sums), rather than on fp16 planes.
/// Transposed against the planar path: A is the Toeplitz band of a mask row (16 output
/// bytes × 32 input bytes: output byte `m` reads input byte `k = m + IMMA_KLEAD + c·(dx - r)`,
/// channels `c` bytes apart, so one band serves every channel), B is 8 rows × 32 bytes of
/// the staged window, loaded a word a lane straight from the tensor copy's bytes. Each tap
/// is three signed 8-bit limbs ([`LIMBS`]), each summed exactly in its own s32
/// accumulator. Needs `r·c <= IMMA_KLEAD` (every compiled channel count at r <= 2).
#[inline]
pub const fn imma(r: u32) -> bool {
    r == 1 || r == IMMA_MAX_RADIUS
}

/// Largest radius of the integer path.
pub const IMMA_MAX_RADIUS: u32 = 2;

/// Signed 8-bit limbs of a scaled tap (`w = d2·2^16 + d1·2^8 + d0`, each in -128..=127).
pub const LIMBS: u32 = 3;

/// Largest |scaled tap| three limbs hold: `127 · (2^16 + 2^8 + 1)`.
pub const IMMA_MAX_TAP: i32 = 127 * (65536 + 256 + 1);

/// Output bytes of a unit row (the MMA's m16) and input bytes of its window (its k32).
pub const IMMA_M: u32 = 16;
/// Rows of a unit: the MMA's two 8-row B blocks (its n8) a warp sums together.
pub const IMMA_UNIT_ROWS: u32 = 16;
/// Input bytes of a unit's window (the MMA's k).
pub const IMMA_K: u32 = 32;
/// Bytes of a unit's window before its first output byte: output byte `m` of a unit reads
/// window byte `k = m + IMMA_KLEAD + c·(dx - r)`.
pub const IMMA_KLEAD: u32 = 8;
/// Bytes a staged row holds before the tile's first output byte: 16, so that the tensor
/// copy's box starts 16-byte aligned in the image (a box starting between, 8 bytes in,
/// made the copy fault with an illegal instruction). The window of the unit at output
/// byte `16j` is then staged bytes `16j + 8 .. 16j + 40`, read a word a lane.
pub const IMMA_LEAD: u32 = 16;

/// Bytes of a staged row (the tensor copy's box across): the tile's bytes, the lead
/// before and 32 after (the last unit's window ends 24 bytes past the tile). An odd number
/// of 16-byte groups, so that a warp's word loads of 8 rows fall on distinct banks.
#[inline]
pub const fn imma_raw_w(c: u32) -> u32 {
    tile_bytes(c) + IMMA_LEAD + 32
}

/// Words of a staged row the units read, `from..to` (word `q` holds bytes `4q..4q + 4`):
/// the first unit's window starts [`IMMA_LEAD`]` - `[`IMMA_KLEAD`] bytes in, the last
/// one's ends [`IMMA_K`] bytes after its start. The ghost-word pass rewrites these alone.
#[inline]
pub const fn imma_read_words(c: u32) -> (u32, u32) {
    let from = IMMA_LEAD - IMMA_KLEAD;
    (from / 4, (tile_bytes(c) - IMMA_M + from + IMMA_K) / 4)
}

/// Staged rows of a tile.
#[inline]
pub const fn imma_rows(r: u32, c: u32) -> u32 {
    tile_h(r, c) + 2 * r
}

/// Shared bytes of a ring slot (a staged window), a multiple of 128 (the tensor copy's
/// destination alignment).
#[inline]
pub const fn imma_slot_bytes(r: u32, c: u32) -> u32 {
    (imma_raw_w(c) * imma_rows(r, c)).div_ceil(128) * 128
}

// The units' windows start and end on words, inside the staged row.
const _: () = {
    assert!((IMMA_LEAD - IMMA_KLEAD).is_multiple_of(4) && IMMA_K.is_multiple_of(4) && IMMA_M.is_multiple_of(4));
    let mut c = 1;
    while c <= MAX_CHANNELS {
        assert!(imma_read_words(c).1 * 4 <= imma_raw_w(c));
        c += 1;
    }
};

/// Slots of the ring: the next tile's copy lands while the block sums this one.
pub const IMMA_RING: u32 = 3;

/// Units ([`IMMA_M`] output bytes × [`IMMA_UNIT_ROWS`] rows) of a tile.
#[inline]
pub const fn imma_units(r: u32, c: u32) -> u32 {
    tile_bytes(c) / IMMA_M * (tile_h(r, c) / IMMA_UNIT_ROWS)
}

/// Bytes of the A table: per mask row and limb, 16 bytes per lane (the fragment's 4
/// registers of 4 taps' limbs).
#[inline]
pub const fn imma_table_bytes(r: u32) -> u32 {
    (2 * r + 1) * LIMBS * 32 * 16
}

/// Side of the taps' prefix-sum table (`2r + 2`): entry `(i, j)` is the sum of the taps
/// of mask rows `< i` and columns `< j`.
#[inline]
pub const fn imma_prefix_side(r: u32) -> u32 {
    2 * r + 2
}

/// Byte of the table buffer where the prefix sums start: after the A table and its four
/// scale words.
#[inline]
pub const fn imma_prefix_at(r: u32) -> u32 {
    imma_table_bytes(r) + 16
}

/// Bytes of the table buffer: the A table ([`imma_slot_dx`]), then `2^-s`, `2^(16-s)` (f32)
/// and two zero words, then the taps' prefix sums ([`imma_prefix_side`]² f32, row-major),
/// from which a border output adds `fill × (the taps on ghost cells)` under a constant
/// fill (its ghost cells staged as 0, as the tensor copy lands them), padded to 16 bytes.
#[inline]
pub const fn imma_table_buffer_bytes(r: u32) -> u32 {
    (imma_prefix_at(r) + 4 * imma_prefix_side(r) * imma_prefix_side(r)).div_ceil(16) * 16
}

/// The mask column `dx` whose limb lane `lane`'s A register `q` (0..4) holds in byte `i`
/// (0..4) for `c` channels at radius `r`, or `None` (0): the `m16n8k32` A layout (row
/// `g + 8(q % 2)`, column `4t + i + 16(q / 2)`, `g = lane / 4`, `t = lane % 4`), where
/// `A[m][k]` is tap `dx` for `k = m + IMMA_KLEAD + c·(dx - r)`.
#[inline]
pub const fn imma_slot_dx(r: u32, c: u32, lane: u32, q: u32, i: u32) -> Option<u32> {
    let (g, t) = (lane / 4, lane % 4);
    let (m, k) = (g + 8 * (q % 2), 4 * t + i + 16 * (q / 2));
    let d = (k + c * r) as i32 - (m + IMMA_KLEAD) as i32;
    if d >= 0 && (d as u32).is_multiple_of(c) && d as u32 / c <= 2 * r {
        Some(d as u32 / c)
    } else {
        None
    }
}

/// Where the shared output tile lies: after the ring.
#[inline]
pub const fn imma_out_at(r: u32, c: u32) -> u32 {
    IMMA_RING * imma_slot_bytes(r, c)
}

/// Where the ring's tensor-copy barriers lie: after the output tile (8-byte aligned).
#[inline]
pub const fn imma_barriers_at(r: u32, c: u32) -> u32 {
    (imma_out_at(r, c) + out_bytes(r, c)).div_ceil(16) * 16
}

/// Where the tile counter's shared words lie: after the barriers (16-byte aligned).
#[inline]
pub const fn imma_counted_at(r: u32, c: u32) -> u32 {
    (imma_barriers_at(r, c) + 4 * IMMA_RING * crate::tile_map::BARRIER_FLOATS).div_ceil(16) * 16
}

/// Shared bytes of an integer-path block.
#[inline]
pub const fn imma_shared_bytes(r: u32, c: u32) -> u32 {
    imma_counted_at(r, c) + 4 * crate::args::COUNTED_WORDS
}

/// The tensor copy's box `[x, y, z]` in 2-byte elements (`crate::tile_map::BYTE_ELEMENT`).
#[inline]
pub const fn imma_box(r: u32, c: u32) -> [u32; 3] {
    [imma_raw_w(c) / 2, imma_rows(r, c), 1]
}

/// 4-byte words a thread stages of a window by threads (`stage::bytes_window`), at most.
pub const IMMA_STAGE_WORDS: u32 = 22;

const _: () = {
    let mut c = 1;
    while c <= MAX_CHANNELS {
        let mut r = 1;
        while r <= 2 {
            assert!(imma(r) && r * c <= IMMA_KLEAD);
            assert!((imma_raw_w(c) / 16) % 2 == 1 && imma_raw_w(c).is_multiple_of(4));
            assert!(imma_units(r, c).is_multiple_of(warps(r, c)));
            assert!(IMMA_STAGE_WORDS * threads(r, c) * 4 >= imma_raw_w(c) * imma_rows(r, c));
            assert!(imma_box(r, c)[0] <= 256);
            r += 1;
        }
        c += 1;
    }
};

/// The table row.
pub const FAMILY: Family = Family {
    name: "image_mma",
    dim: 2,
    mask: MaskLoc::MmaTable,
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: true,
    compiled_channels: Some(MAX_CHANNELS),
    pixels: crate::family::Pixels::U8,
    separable: false,
    launch_shape,
    summary: "ours: u8 pitched multi-channel image on the tensor cores (r = 1, 2: s8 x u8 Toeplitz products over the interleaved bytes, taps in 3 limbs; r = 0, 3, 4: planar fp16, split taps), every mode",
};

/// One block per tile on the fp16 path; the integer path's blocks are persistent (the
/// host caps the grid at what the SMs hold), taking tiles from the counter.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    let px = TILE_PX as usize;
    let c = p.channels;
    let tiles = blocks(w as usize, px, MAX_GRID_X)? as usize * blocks(h as usize, tile_h(r, c) as usize, MAX_GRID_X)? as usize;
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, MAX_GRID_X)?, 1, 1),
        block: (threads(r, c), 1, 1),
        shared_bytes: shared_bytes(r, c),
        persistent: imma(r),
        depth: None,
    })
}
