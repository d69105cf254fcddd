//! `conv2d_separable` (kernels-gpu/src/conv2d_separable.rs): rank-1 2D masks (a column
//! of taps times a row of taps), one pass. A block owns a 128-column strip and walks
//! down a chunk of rows (past r = 16, its balanced share of every strip's rows:
//! [`balanced`]): input rows stream into shared memory with 16-byte `cp.async`,
//! the row pass writes 32 filtered rows per step into a ring of shared rows, and the
//! column pass sums the ring's rows into 32 output rows. Each output costs `2(2r+1)`
//! FMAs, and the intermediate never leaves the chip.
use crate::shape::{blocks, MAX_GRID_X, MAX_GRID_YZ};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads per block.
pub const THREADS: u32 = 256;
/// Columns of a strip.
pub const TILE_W: u32 = 128;
/// Rows a step filters (row pass) and outputs (column pass).
pub const STEP: u32 = 32;
/// Output rows a block computes, walking down its strip: a chunk reads `lag(r)` steps of
/// rows past it, so long chunks pay where the radius is large, and short ones fill the
/// GPU's last wave where it is small (H200, 8192², two runs each, µs: 256 rows r = 2
/// 152 / r = 4 154 / r = 32 459, 512 rows 160 / 157 / 441-448, 1024 rows 175 / 182 /
/// 435; r = 8 163 with 256 or 512, r = 16 244 with 512, 246 with 256). Since the last
/// step stages only the rows read, 128 rows gain about 1% at r = 2 and 4 (147.2 ->
/// 145.8, 148.6 -> 146.5; r = 8 on 512 rows 162.8 -> 164.0: three runs each). Past
/// r = 16, 2048 rows (the lag's 2 steps are half the share of a chunk's 64, and 8192²
/// is one wave of 256 blocks at 2 an SM): r = 32 346.9 -> 338.8 (3 rounds). Past r = 16
/// the kernels walk balanced shares instead ([`balanced`]); the tests size the images
/// that must hold several of those old chunks from this value.
#[inline]
pub const fn chunk(r: u32) -> u32 {
    match r {
        0..=4 => 128,
        5..=8 => 256,
        9..=16 => 512,
        _ => 2048,
    }
}

/// Columns a thread filters in the row pass. From r = 16, 16: the thread streams its
/// row's window through 16 accumulators one 16-byte load at a time, so an output costs
/// `(16 + 2·pad)/64` loads instead of `(4 + 2·pad)/16` (r = 32: 1.25 against 4.25). ncu at
/// r = 16 (two launches each): 173.6-179.5 M -> 164.5-169.1 M warp instructions, shared
/// wavefronts 34.2 M -> 20.7 M (the pipe 65% -> 42% busy). H200, 8192², 3 rounds, µs: r = 16
/// 206.5 -> 197.8, r = 32 385.7 -> 349.2. From r = 2 (8 wide at r = 9..15) r = 2, 4, 8
/// ran 1.4-3.1% slower (145.0 -> 147.1, 146.5 -> 151.0, 154.8 -> 158.3), so below
/// r = 16, 4 (one F4; a warp's loads of a row contiguous). Eight columns with the whole
/// window in registers (two rows a warp) had run 2.6-6.1% slower at every radius.
#[inline]
pub const fn row_x(r: u32) -> u32 {
    if r >= 16 {
        16
    } else {
        4
    }
}

/// Floats added to a staged row's and a ring row's pitch where the row pass is 16 wide:
/// each 8 threads of a warp's 16-byte load or store (a quarter of the warp) take 8 rows
/// of one segment, and an odd number of 16-byte units between rows puts them on the 8
/// bank groups (at a multiple of 128 bytes they would share one).
#[inline]
pub const fn skew(r: u32) -> u32 {
    if row_x(r) > 4 {
        4
    } else {
        0
    }
}

/// Floats between two staged input rows (the tensor copy's box width).
#[inline]
pub const fn input_pitch(r: u32) -> u32 {
    staged_w(r) + skew(r)
}

/// Floats between two ring rows.
#[inline]
pub const fn ring_pitch(r: u32) -> u32 {
    TILE_W + skew(r)
}

/// Columns of the patch a thread sums in the column pass: 2 (one 8-byte load of a ring
/// row, the patch 8 rows tall) but at r = 12, whose baked taps spill 4 bytes at 80
/// registers: 4 there (one 16-byte load, 4 rows). A warp reads a ring row's contiguous
/// floats and writes a row's contiguous outputs. 2 x 8 against 4 x 4 (H200, 8192², 3
/// rounds, µs): r = 2 143.4 -> 143.0, r = 4 144.7 -> 144.2, r = 8 154.8 -> 153.4, r = 16
/// 214.7 -> 207.4, r = 32 (with the 16-wide row pass) 349.2 -> 345.2; before that row
/// pass, a build whose wrap select cost two more instructions a ring row ran r = 32
/// 383.1 -> 392.6. Against one column of 16 rows per thread (three runs each: r = 2
/// 146.0 -> 144.2, r = 8 163.3 -> 162.9, r = 16 247.9 -> 240.4, r = 32 437.4 -> 433.4),
/// a ring row is one load for several outputs a row rather than scalar loads, and the
/// stores fewer instructions.
#[inline]
pub const fn patch_x(r: u32) -> u32 {
    match r {
        12 => 4,
        _ => 2,
    }
}

/// Rows of a thread's column-pass patch: the patches tile a step, `TILE_W / patch_x`
/// threads across.
#[inline]
pub const fn patch_rows(r: u32) -> u32 {
    STEP * TILE_W / patch_x(r) / THREADS
}

/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 32;

pub use super::pad;

/// Width of a staged input row: the strip and its halos.
#[inline]
pub const fn staged_w(r: u32) -> u32 {
    TILE_W + 2 * pad(r)
}

/// Steps the outputs lag behind the row pass: a step's outputs need `r` filtered rows
/// past them.
#[inline]
pub const fn lag(r: u32) -> u32 {
    (2 * r).div_ceil(STEP)
}

/// Filtered rows the ring holds: those a step's outputs read and the step being filtered.
#[inline]
pub const fn ring_rows(r: u32) -> u32 {
    (lag(r) + 1) * STEP
}

/// Shared floats of one staged input buffer.
#[inline]
pub const fn input_floats(r: u32) -> u32 {
    STEP * input_pitch(r)
}

/// Shared floats a block needs: two input buffers (one filtered while the next streams
/// in), the ring, and the tensor copies' two barriers.
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    barriers_at(r) + 2 * crate::tile_map::BARRIER_FLOATS
}

/// Where the tensor copies' barriers lie (floats from the shared base; 8-byte aligned):
/// one `mbarrier` an input buffer, after the ring.
#[inline]
pub const fn barriers_at(r: u32) -> u32 {
    2 * input_floats(r) + ring_rows(r) * ring_pitch(r)
}

/// Whether the entry stages its steps with tensor copies where the host gives it a tile
/// map (`crate::tile_map`), as `conv2d_fast` does its tiles: from r = 8, where the
/// threads' copies cost issue slots the FFMAs need (H200, 8192², 3 rounds, µs: r = 8
/// 163.5 -> 157.6, r = 16 240.3 -> 220.3, r = 32 430.7 -> 398.4); below, where memory
/// dominates, they were slower (r = 2 144.9 -> 147.3, r = 4 145.9 -> 149.2).
#[inline]
pub const fn tile_map(r: u32) -> bool {
    r >= 8
}

/// The box of the tile map: a step's staged rows, at their pitch.
#[inline]
pub const fn tile_box(r: u32) -> [u32; 3] {
    [input_pitch(r), STEP, 1]
}

/// Whether blocks walk balanced shares of every strip's steps (a 1D grid of one block per
/// slot of the GPU, [`segment`]) rather than one chunk of one strip each: past r = 16,
/// where arithmetic dominates. 8192² was 256 chunks on 264 slots (8 SMs held one block),
/// and smaller images far fewer chunks than slots (2048²: 16). H200, medians in µs
/// (the sixty-ninth session's runs 1, 2): 8192² r = 24 274.0 -> 269.3, r = 32 342.4 ->
/// 338.0 and 342.2 -> 337.7; 4096² r = 17 118.7 -> 63.0, r = 32 193.5 -> 99.3; 2048²
/// r = 17 116.0 -> 24.1, r = 32 183.6 -> 34.8. From r = 9 they lost where the image
/// does not fit in L2, as the 3D walks' shares did (8192² r = 9 158.7 -> 200.8, r = 12
/// 179.7 -> 194.3, r = 16 196.0 -> 198.8; 4096² r = 9 47.7 -> 49.9), though 2048² ran
/// 1.4-1.6x faster there (r = 9 31.0 -> 20.0, r = 16 35.0 -> 23.7).
#[inline]
pub const fn balanced(r: u32) -> bool {
    r > 16
}

/// A strip's cost in half-steps, the unit of the balanced shares: 2 an output step (its
/// row pass and its column pass) and 1 a step of the lag (a row pass alone), which the
/// segment that starts the strip pays. A share that starts inside a strip pays a lag
/// beyond its units, as nearly every share does.
#[inline]
pub const fn strip_units(r: u32, h: u32) -> u32 {
    lag(r) + 2 * h.div_ceil(STEP)
}

/// Units of the balanced shares: every strip's (`layout::families::conv3d_fast::
/// balanced_range` splits them among the blocks).
#[inline]
pub const fn share_units(r: u32, [w, h]: [u32; 2]) -> u32 {
    w.div_ceil(TILE_W) * strip_units(r, h)
}

/// The fewest units a block's share holds (the launch's grid is at most the units over
/// this): one output step and the lag. The grid is one wave however short the shares,
/// so more blocks finish sooner while they fit: 2048² r = 17 28.5 -> 24.1 µs, r = 32
/// 40.0 -> 34.8 against shares of at least 8 steps (H200, runs 1, 2).
#[inline]
pub const fn least_units(r: u32) -> u32 {
    lag(r) + 2
}

/// The output step at which a share's boundary `o` units into a strip falls: step 0 up
/// to the lag's end, then one step per 2 units (a boundary inside a step's 2 units moves
/// to its end). Neighbouring shares take the same boundary, so each step is one share's.
#[inline]
pub const fn step_at(r: u32, o: u32) -> u32 {
    if o <= lag(r) {
        0
    } else {
        (o - lag(r)).div_ceil(2)
    }
}

/// One strip's part of a share: its output steps `first .. end` (possibly none) of strip
/// `strip`, and the share's unit after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The strip (its columns from `TILE_W * strip`).
    pub strip: u32,
    /// Its first output step (rows from `STEP * first`).
    pub first: u32,
    /// The output step after its last.
    pub end: u32,
    /// The share's next unit: the next segment's start, or the share's end.
    pub next: u32,
}

/// The segment of a share (units `u .. end`, `u < end`) that starts at unit `u`, in an
/// image `h` rows tall.
#[inline]
pub const fn segment(r: u32, h: u32, u: u32, end: u32) -> Segment {
    let per = strip_units(r, h);
    let strip = u / per;
    let base = strip * per;
    let o1 = if end - base < per { end - base } else { per };
    Segment {
        strip,
        first: step_at(r, u - base),
        end: step_at(r, o1),
        next: base + o1,
    }
}

/// Blocks per SM the launch bounds ask for.
#[inline]
pub const fn min_blocks(r: u32) -> u32 {
    if r <= 16 {
        3
    } else {
        2
    }
}

// Every entry's buffers fit the blocks per SM its launch bounds ask for.
const _: () = {
    let mut r = 0;
    while r <= MAX_RADIUS {
        assert!(super::shared_fits(4 * shared_floats(r), min_blocks(r)));
        r += 1;
    }
};

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv2d_separable",
    dim: 2,
    mask: MaskLoc::Const(masks::MASK_1D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: true,
    launch_shape,
    summary: "ours: rank-1 masks in one pass, row and column filters, the intermediate in a shared ring",
};

/// One block per (128-column strip, chunk of `chunk(r)` rows), or where [`balanced`], a
/// 1D grid of persistent blocks (the launch caps it at the resident ones), each walking
/// its share of the [`share_units`] at least [`least_units`] long.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, _] = p.extent;
    if balanced(r) {
        // At most the elements / 2048 (< 2^31).
        let units = share_units(r, [w, h]);
        return Ok(LaunchShape {
            grid: ((units / least_units(r)).clamp(1, MAX_GRID_X), 1, 1),
            block: (THREADS, 1, 1),
            shared_bytes: shared_floats(r) * 4,
            persistent: true,
            depth: None,
        });
    }
    Ok(LaunchShape {
        grid: (
            blocks(w as usize, TILE_W as usize, MAX_GRID_X)?,
            blocks(h as usize, chunk(r) as usize, MAX_GRID_YZ)?,
            1,
        ),
        block: (THREADS, 1, 1),
        shared_bytes: shared_floats(r) * 4,
        persistent: false,
        depth: None,
    })
}
