//! `conv2d_fast` (kernels-gpu/src/conv2d_fast.rs): compile-time radius, each thread a
//! 4-wide x K-tall patch of outputs in registers, tiles staged with 16-byte `cp.async`.
use crate::shape::{blocks, MAX_GRID_X};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads across a block: one warp, so a warp's 16-byte loads and stores cover 512
/// contiguous bytes.
pub const THREADS_X: u32 = 32;
/// Threads down a block.
pub const THREADS_Y: u32 = 8;
/// Outputs per thread across (one F4).
pub const QX: u32 = 4;
/// Output tile width of a block.
pub const TILE_W: u32 = THREADS_X * QX;
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 8;

/// Output rows per thread: more rows share each loaded input row (and the tile's halo
/// rows), but code size grows as 4·K·(2r+1)² and so do registers. `c` interleaved
/// channels (`image_patches`; the taps `c` floats apart): 8 rows from r = 1, for windows
/// `c` times as wide (H200, 8192² × 3 f32, against 4 and 3 rows: r = 2 464 -> 406 us,
/// r = 3 596 -> 528, r = 4 835 -> 734). One channel keeps its rows: 6 or 8 rows at
/// r = 3, 4 moved `conv2d_fast` by under 1.5%. 2 and 3 channels at r = 4 take 6: a
/// band's unrolled taps are then 1944 FFMAs, not 2592, and the hot loop fits the
/// instruction cache better (H200 ncu: no-instruction stalls 0.36 an issue at 8 rows,
/// 0.95 with 3240 FFMAs a band; H100, 8192² × 3, A/B of 3 rounds: 678.4 -> 651.4 us;
/// H200, 8192² × 2, three runs: 424.2 -> 407.6, 424.9 -> 409.1, 427.8 -> 413.4 us). 4
/// channels keep 8 (903.1 -> 920.4, 910.1 -> 922.8 us in 6 rows): their windows are 36
/// floats, and 6 rows would load 9·14 of them a band for 1944 FFMAs.
#[inline]
pub const fn rows_per_thread(r: u32, c: u32) -> u32 {
    if r == 4 && (c == 2 || c == 3) {
        return 6;
    }
    if c > 1 && r >= 1 {
        return 8;
    }
    match r {
        0..=3 => 4,
        4 => 3, // 4 rows need ~148 registers: one block per SM instead of two
        _ => 2,
    }
}

/// Bands of a tile: each thread filters its `rows_per_thread` rows of each band in
/// turn (a band is `THREADS_Y · rows_per_thread` rows), so that a tile's bookkeeping
/// (its cursor, copy, barriers and waits: about 65 instructions a thread, beside the
/// 1055 of a band's 972 FFMAs, loads and stores at r = 4) is paid once for two bands, and
/// its halo rows staged once. Registers stay those of one band. H200, 8192², r = 4
/// (A/B, 3 rounds): 217.0 -> 212.1 us with 2 bands; 3 bands (2 stages, to fit two
/// blocks an SM) 220.2.
#[inline]
pub const fn bands(r: u32, c: u32) -> u32 {
    match (r, c) {
        (4, 1) => 2,
        _ => 1,
    }
}

/// Output rows of a band of a tile.
#[inline]
pub const fn band_h(r: u32, c: u32) -> u32 {
    THREADS_Y * rows_per_thread(r, c)
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32, c: u32) -> u32 {
    band_h(r, c) * bands(r, c)
}

/// Halo floats staged on each side of a row of `c` interleaved channels of pixels of
/// `bytes` bytes: the `r·c` a tap reaches, in whole sectors (f32); u8 rows are copied as
/// they are, 16 bytes at a time (`stage::bytes16`), so their windows start 16-pixel aligned.
#[inline]
pub const fn pad(r: u32, c: u32, bytes: u32) -> u32 {
    if bytes == 1 {
        (r * c).div_ceil(16) * 16
    } else {
        super::pad(r * c)
    }
}

/// Persistent blocks where arithmetic dominates (r >= 3: 219 vs 253 us at r = 3, 8192²);
/// below, one block per tile, where the hardware's block scheduling overlaps tiles
/// better (r = 1: 153 vs 165 us). Measured on the H200 (BENCHMARKS.md).
#[inline]
pub const fn persistent(r: u32) -> bool {
    r >= 3
}

/// Whether the entries stage f32 tiles with tensor copies where the host gives them a
/// tile map (`crate::tile_map`): the persistent radii, where the 16-byte copies took 17%
/// of the instructions at r = 3 (ncu) and a build without them ran 20% faster.
#[inline]
pub const fn tile_map(r: u32) -> bool {
    persistent(r)
}

/// The box of the tile map: a staged tile of `c` channels, in floats across, rows down
/// and planes (one), as `stage::Window` reads it from `(x0 - pad, y0 - r)`.
#[inline]
pub const fn tile_box(r: u32, c: u32) -> [u32; 3] {
    [staged_w(r, c, 4), tile_h(r, c) + 2 * r, 1]
}

/// Tiles in flight per block: a 3-deep ring when persistent, else one; 2 deep for
/// interleaved channels, whose 8-row tiles in 3 buffers would leave one block per SM
/// (H200, 8192² × 3 f32 r = 4: 8 rows 2 deep 736 us, 6 rows 3 deep 734; with 6 rows at
/// two blocks an SM, 3 deep 642.0 against 2 deep 642.4, and 2 deep lets three blocks an
/// SM fit), and at r = 4, whose baked blocks run three an SM ([`baked_min_blocks`]).
#[inline]
pub const fn stages(r: u32, c: u32) -> u32 {
    match (persistent(r), c, r) {
        (false, _, _) => 1,
        (true, 1, 4) => 2,
        (true, 1, _) => 3,
        (true, _, _) => 2,
    }
}

/// Whether the block waits at a barrier after a tile that came by a tensor copy landed,
/// before computing it. Each thread has already waited on the copy's `mbarrier` itself,
/// so r = 3, 4 skip it at every channel count and keep only the barrier before a buffer
/// is refilled (H200, 8192², A/B of 3 rounds: one channel r = 4 214.8 -> 209.7 us, r = 3
/// 152.2 -> 151.0; 3 f32 channels r = 4 658.7 -> 646.5, r = 3 465.0 -> 461.5); rank-1
/// r = 8 on these tiles ran 2.5% slower without it, so the other radii keep it.
#[inline]
pub const fn barrier_after_copy(r: u32) -> bool {
    !(r == 3 || r == 4)
}

/// Whether a border tile comes by the tensor copy under every ghost-cell mode, its ghost
/// cells written by the threads once it lands (`stage::ghosts_after_copy`): one channel
/// at r = 3, 4, where the mapping modes' border tiles staged by threads ran 1.043-1.053x
/// zero's time at three blocks an SM (H200, 8192², r = 4); with them by copy, 1.011-1.026.
/// Elsewhere border tiles under a mode other than zero are staged by threads.
#[inline]
pub const fn border_tiles_by_copy(r: u32, c: u32) -> bool {
    c == 1 && tile_map(r) && r <= 4
}

/// Width of a staged row: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32, c: u32, bytes: u32) -> u32 {
    TILE_W + 2 * pad(r, c, bytes)
}

/// Shared floats of one tile buffer.
#[inline]
pub const fn buffer_floats(r: u32, c: u32, bytes: u32) -> u32 {
    staged_w(r, c, bytes) * (tile_h(r, c) + 2 * r)
}

/// Shared floats of the area u8 tiles land in as bytes before they are widened into
/// their buffer (`stage::bytes16`; one buffer only, r <= 2): a byte a staged cell.
#[inline]
pub const fn raw_floats(r: u32, c: u32, bytes: u32) -> u32 {
    if bytes == 1 && stages(r, c) == 1 {
        buffer_floats(r, c, bytes) / 4
    } else {
        0
    }
}

/// Raw slots in the ring of u8 tiles computed from their bytes, at r <= 1 (0 elsewhere):
/// `image_patches`' persistent blocks copy the next tiles' bytes while they filter one,
/// each thread widening the words its window reads in registers
/// (`conv2d_fast::compute_bytes`). Every tile is staged as bytes, border tiles with their
/// ghost cells (`stage::bytes16_edges`), where those are bytes ([`byte_ghosts`]); else
/// the tiles take the f32 path. 3 slots of the 4-wide tiles, 2 of the wider ones
/// ([`byte_qx`]; 3 ran 189.2 against 186.1 µs, H200, 8192² × 3 u8, r = 1). H200, 8192²
/// × 3 u8, r = 1: see `image_patches::U8_AUTO_RADII`.
#[inline]
pub const fn byte_ring(r: u32, c: u32, bytes: u32) -> u32 {
    match (bytes, r) {
        (1, 0..=1) if byte_qx(r, c) > QX => 2,
        (1, 0..=1) => 3,
        _ => 0,
    }
}

/// Outputs a thread filters across in a tile of the byte ring: 8 bytes with interleaved
/// channels at r = 1, where a 4-wide window row of 4 + 2·r·c bytes took 3 words widened
/// for 4 outputs (the widening was half the instructions of the sums); 8 wide, 4 words
/// for 8. H200, 8192² × 3 u8, r = 1 (A/B medians): 192.0 -> 186.1 µs (a 3-deep ring
/// 189.2; 16 wide, at 2 blocks an SM for its registers, 237.7), then with a row's 8
/// bytes in one store and two of its 4 words through the conversion pipe 192.4 -> 173.4
/// (ncu of the first step: 11% fewer instructions, issue 81% of the cycles before and
/// after: issue-bound). 4 elsewhere (one channel keeps 48 registers at 5 blocks an SM).
#[inline]
pub const fn byte_qx(r: u32, c: u32) -> u32 {
    if r == 1 && c > 1 {
        2 * QX
    } else {
        QX
    }
}

/// Most outputs a thread filters across in a byte-ring tile ([`byte_qx`]): the size of
/// its sums' rows.
pub const BYTE_QX_MAX: u32 = 2 * QX;

/// Output rows a thread filters down a byte-ring tile, one after another: the rows of its
/// `f32` patch ([`rows_per_thread`]). 16 rows at 8 wide ran slower than 8 (H200, 8192² ×
/// 3 u8, r = 1: 181.0 against 173.4 µs).
#[inline]
pub const fn byte_rows(r: u32, c: u32) -> u32 {
    rows_per_thread(r, c)
}

/// Width in bytes of a byte-ring tile: a warp across.
#[inline]
pub const fn byte_tile_w(r: u32, c: u32) -> u32 {
    THREADS_X * byte_qx(r, c)
}

/// Height of a byte-ring tile.
#[inline]
pub const fn byte_tile_h(r: u32, c: u32) -> u32 {
    THREADS_Y * byte_rows(r, c)
}

/// Bytes of a staged row of a byte-ring tile: the tile and its halos (16-byte aligned).
#[inline]
pub const fn byte_staged_w(r: u32, c: u32) -> u32 {
    byte_tile_w(r, c) + 2 * pad(r, c, 1)
}

/// Shared floats of a slot of the byte ring: a staged tile's bytes, in whole 128 bytes
/// (where a tensor copy may land: [`byte_tile_map`]).
#[inline]
pub const fn byte_slot_floats(r: u32, c: u32) -> u32 {
    (byte_staged_w(r, c) * (byte_tile_h(r, c) + 2 * r) / 4).next_multiple_of(32)
}

/// Whether the byte ring's tiles inside the image come by one tensor copy each where the
/// host gives a map of the u8 image (`crate::tile_map::byte_tile_box`: rows and the first
/// pixel 16-byte aligned), rather than by the threads' 16-byte copies (`stage::bytes16`:
/// 4.6 a thread a tile at about 15 instructions each): interleaved channels, whose tiles
/// are handed out by the counter ([`counted`]). The copy reads the staged window as
/// 2-byte elements, so that its 288 bytes across fit a box (at most 256 elements).
#[inline]
pub const fn byte_tile_map(r: u32, c: u32) -> bool {
    byte_ring(r, c, 1) > 0 && c > 1
}

/// The box of the byte ring's tensor copies ([`byte_tile_map`]): a staged window in
/// 2-byte elements across ([`crate::tile_map::BYTE_ELEMENT`]), rows down, one plane.
#[inline]
pub const fn byte_tile_box(r: u32, c: u32) -> [u32; 3] {
    [byte_staged_w(r, c) / crate::tile_map::BYTE_ELEMENT, byte_tile_h(r, c) + 2 * r, 1]
}

/// Where the byte ring's tensor copies' barriers lie (floats from the shared base; 8-byte
/// aligned): a barrier a slot, after the slots and the counter's words.
#[inline]
pub const fn byte_barriers_at(r: u32, c: u32) -> u32 {
    byte_ring(r, c, 1) * byte_slot_floats(r, c) + if counted(r, c, 1) { crate::args::COUNTED_WORDS } else { 0 }
}

/// Words of a tile's bytes a thread stages at most (`stage::bytes_window`, 256 threads).
pub const BYTE_WORDS: u32 = 19;

/// Whether the ghost cells of a u8 tile are bytes under ghost-cell mode `mode` (a
/// `layout::mode::code`) and constant fill `fill`: every mode but a constant whose fill
/// is not a byte value (0 to 255), whose tiles take the f32 path ([`byte_ring`]).
#[inline]
pub fn byte_ghosts(mode: u32, fill: f32) -> bool {
    mode != crate::mode::code::CONSTANT || ((0.0..=255.0).contains(&fill) && fill as u8 as f32 == fill)
}

/// Shared floats a block needs: `stages` tile buffers and the raw area (above 48 KiB the
/// host opts in), then a tensor copies' barrier a buffer where the radius takes them and
/// the counter's words ([`counted_at`]) at the persistent radii; or the ring of raw slots
/// and the counter's words where u8 tiles take it, if larger (the launch does not know
/// which path its ghost-cell mode takes: [`byte_ghosts`]).
#[inline]
pub const fn shared_floats(r: u32, c: u32, bytes: u32) -> u32 {
    let tiles = match counted(r, c, 4) {
        true => counted_at(r, c, bytes) + crate::args::COUNTED_WORDS,
        false => barriers_end(r, c, bytes),
    };
    let ring = match byte_ring(r, c, bytes) {
        0 => 0,
        n if byte_tile_map(r, c) => byte_barriers_at(r, c) + n * crate::tile_map::BARRIER_FLOATS,
        _ => byte_barriers_at(r, c),
    };
    if ring > tiles {
        ring
    } else {
        tiles
    }
}

/// Whether a block takes its tiles past its first rounds from the launch's counter
/// (`device::counted_tiles`, `crate::args::ConvArgs::tile_counter`) rather than walking
/// them `gridDim.x` apart: interleaved channels, in the byte ring (`bytes` 1, r <= 1) and
/// at the persistent radii. H200, 8192² × 3 (A/B, two rounds each, medians in µs): f32
/// r = 3 471.0 -> 444.2–445.5, r = 4 623.3 -> 616.7–617.3, u8 r = 1 157.7–159.0 ->
/// 152.1–152.7. One channel walks them: its byte ring (48 registers) spilled 28 bytes
/// with the taken index live across a tile, and `conv2d_fast` ran slower with the
/// counter (8192², r = 3 152.5–153.0 -> 158.4–161.0, r = 4 207.9–208.7 -> 209.6–211.3;
/// r = 4 again with the dividers, four rounds: 213.4 -> 214.7).
#[inline]
pub const fn counted(r: u32, c: u32, bytes: u32) -> bool {
    c > 1 && (byte_ring(r, c, bytes) > 0 || persistent(r))
}

/// Where the words of the tiles handed out by the launch's counter lie
/// (`crate::args::COUNTED_WORDS`, 16-byte aligned; floats from the shared base): after the
/// byte ring's slots where u8 tiles take it, else after the tensor copies' barriers (the
/// persistent radii).
#[inline]
pub const fn counted_at(r: u32, c: u32, bytes: u32) -> u32 {
    if byte_ring(r, c, bytes) > 0 {
        return byte_ring(r, c, bytes) * byte_slot_floats(r, c);
    }
    barriers_end(r, c, bytes).next_multiple_of(4)
}

/// Where the tensor copies' barriers end (floats from the shared base): a barrier a
/// buffer after [`barriers_at`] where the radius takes them, else `barriers_at` itself.
#[inline]
const fn barriers_end(r: u32, c: u32, bytes: u32) -> u32 {
    let barriers = if tile_map(r) { stages(r, c) } else { 0 };
    barriers_at(r, c, bytes) + barriers * crate::tile_map::BARRIER_FLOATS
}

/// Where the tensor copies' barriers lie (floats from the shared base; 8-byte aligned:
/// every buffer is an even number of floats).
#[inline]
pub const fn barriers_at(r: u32, c: u32, bytes: u32) -> u32 {
    stages(r, c) * buffer_floats(r, c, bytes) + raw_floats(r, c, bytes)
}

// Every byte-ring tile: one band, slots 16-byte aligned, the words a thread stages fit
// `BYTE_WORDS`.
const _: () = {
    let mut c = 1;
    while c <= 4 {
        let mut r = 0;
        while r <= 1 {
            assert!(byte_ring(r, c, 1) > 0 && bands(r, c) == 1 && byte_slot_floats(r, c).is_multiple_of(4));
            assert!(byte_qx(r, c).is_multiple_of(4) && byte_qx(r, c) <= BYTE_QX_MAX);
            assert!(byte_slot_floats(r, c) <= BYTE_WORDS * THREADS_X * THREADS_Y);
            let [bx, by, _] = byte_tile_box(r, c);
            assert!(bx <= 256 && by <= 256 && byte_staged_w(r, c).is_multiple_of(16));
            r += 1;
        }
        c += 1;
    }
};

/// Blocks per SM an entry's code with its taps baked in asks for (`ptx_builder::bake`:
/// immediates instead of uniform registers): 3 at r = 4 with one channel, 80 registers
/// with no spills, where the code that reads the taps spills 100 bytes and keeps
/// [`min_blocks`]. H200, 8192², r = 4 (A/B of 3 rounds, with [`barrier_after_copy`]):
/// 214.8 -> 206.8 us, two stages at three blocks an SM against three at two. 3 at r = 4
/// with 3 channels too (6-row tiles, 80 registers; H200, 8192² × 3 f32, A/B of 3 rounds:
/// 641.9 -> 625.4 us): up to 6 warps a scheduler instead of 4 hide the windows' loads and
/// the instruction fetch (ncu: issue 0.85 -> 0.89 a cycle).
#[inline]
pub const fn baked_min_blocks(r: u32, c: u32) -> u32 {
    match (r, c) {
        (4, 1) | (4, 3) => 3,
        _ => min_blocks(r, c),
    }
}

/// Blocks per SM each entry's launch bounds ask for (2 blocks = 128 registers, 4 = 64,
/// 5 = 48): what the radius needs for latency hiding.
#[inline]
pub const fn min_blocks(r: u32, c: u32) -> u32 {
    match (r, c) {
        (0, _) => 4, // a 1x1 mask: the staging's border loop is most of the code
        (1, 1) => 5,
        (2, 4) => 3, // the u8 path beside the f32 one: 64 registers spilled 12 bytes
        // Interleaved channels at r = 1: u8 sums 8 wide (`byte_qx`) fit 80 registers, not
        // 64 (f32 images r = 1 ran 399.7 -> 401.3 µs at 3 blocks, H200, 8192² × 3).
        (1, _) => 3,
        (2, _) => 4,

        (3 | 4, _) => 2,
        _ => 4,
    }
}

// Every entry's buffers fit the blocks per SM its launch bounds ask for.
const _: () = {
    let mut r = 0;
    while r <= MAX_RADIUS {
        assert!(super::shared_fits(4 * shared_floats(r, 1, 4), baked_min_blocks(r, 1)));
        assert!(baked_min_blocks(r, 1) >= min_blocks(r, 1));
        r += 1;
    }
};

/// Tiles of a plane of `floats` x `h` (`floats`: a row's pixels times channels).
pub fn tiles(floats: usize, h: u32, r: u32, c: u32) -> Result<usize, ShapeError> {
    Ok(blocks(floats, TILE_W as usize, MAX_GRID_X)? as usize
        * blocks(h as usize, tile_h(r, c) as usize, MAX_GRID_X)? as usize)
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_fast",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_2D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: true,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "ours: compile-time radius, 4xK outputs per thread, cp.async staging",
};

/// One block per 128 x (8K · bands) tile of every plane (a batch of images is `extent[2]` planes),
/// in a 1D grid (persistent radii: capped at the resident blocks, which loop over the
/// tiles in order).
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, planes] = p.extent;
    launch(tiles(w as usize, h, r, 1)? * planes as usize, persistent(r), shared_floats(r, 1, 4))
}

/// The launch of `tiles` tiles with `shared_floats` floats of buffers (this family's and
/// `image_patches`'): one block per tile in a 1D grid (`persistent`: the host caps it at
/// the blocks resident at once, which loop over the tiles in order).
pub fn launch(tiles: usize, persistent: bool, shared_floats: u32) -> Result<LaunchShape, ShapeError> {
    Ok(LaunchShape {
        grid: (blocks(tiles, 1, MAX_GRID_X)?, 1, 1),
        block: (THREADS_X, THREADS_Y, 1),
        shared_bytes: shared_floats * 4,
        persistent,
        depth: None,
    })
}
