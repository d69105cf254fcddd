//! `conv3d_separable` (kernels-gpu/src/conv3d_separable.rs): rank-1 3D masks (a row of
//! taps along x, a column along y and a pillar along z, multiplied), one pass. The
//! skeleton is `conv3d_fast`'s walk along depth: a block owns a `tile_w` x `8K` column
//! of outputs and a chunk of depth, input planes stream through a ring of shared buffers
//! (16-byte `cp.async`), and each thread keeps a register patch per output plane the
//! current input plane touches. Each input plane is filtered along x into a shared
//! buffer (4 outputs a thread), then along y into the thread's registers (a `qx`-wide,
//! `K`-tall patch; at r = 3 along y first, then x: [`y_first`]; at r = 4 the block's
//! pass a plane ahead of the threads': [`lag`]), and that patch is added into the `2r+1`
//! output-plane patches through the z taps: `3(2r+1)` FMAs per output (plus the first
//! filter of the other axis' halo), and the intermediates never leave the chip. The
//! patches' registers grow as `qx·K·(2r+1)`.
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// The walk's geometry shared with `conv3d_fast`: halo columns, chunks of depth, threads.
pub use super::conv3d_fast::{chunk_z, pad, CHUNK_Z, THREADS_X, THREADS_Y};

/// Planes in flight ahead of the one being read: `conv3d_fast`'s, and 3 where planes come
/// by tensor copies (wrap's ghost cells start with their plane's copy, `planes::walk`).
#[inline]
pub const fn ahead(r: u32) -> u32 {
    if tile_map(r) {
        3
    } else {
        super::conv3d_fast::ahead(r)
    }
}

/// Shared plane buffers: the planes in flight, the one being read and the one before.
#[inline]
pub const fn ring(r: u32) -> u32 {
    ahead(r) + 2
}

/// Outputs across per thread in the x filter (one 16-byte load and store).
pub const QX_ROW: u32 = 4;

/// Outputs across per thread in the y and z filters: 4 (a 16-byte load a row, the
/// tile 128 wide), or at r = 4 one column, where 4-wide patches fit one row per thread
/// (9 patches of 4), and the x filter then ran over twice the rows the tile writes. One
/// column of 6 rows a thread makes the tile 32 x 48 (H200, 512^3 r = 4: 647.8 -> 527.3
/// us); columns of 8 rows at r = 1..3 ran 14-24% slower than 4-wide patches (391 / 398 /
/// 461 against 317 / 344 / 403 us).
#[inline]
pub const fn qx(r: u32) -> u32 {
    if r >= 4 {
        1
    } else {
        QX_ROW
    }
}

/// Output tile width of a block.
#[inline]
pub const fn tile_w(r: u32) -> u32 {
    THREADS_X * qx(r)
}

/// Width of a staged row: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32) -> u32 {
    tile_w(r) + 2 * pad(r)
}

/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 4;

/// Output rows per thread: each thread holds `2r+1` patches of this many rows (one per
/// output plane an input plane touches), so registers grow as `qx·K·(2r+1)`. At r = 4
/// (one column): 8 rows, a tile of 32 x 64. A warp's step there is about a third fixed
/// work (the barrier, the waits, the ring's and the x pass's bookkeeping, the stores: about
/// 110 of 319 instructions a warp and step at 6 rows, 170 FFMAs, ncu), which 8 rows spread over a
/// third more outputs (H200, 512^3, three rounds: 346.2 -> 318.9 us; the mapping modes
/// 1.17 -> 1.12-1.13 of zero). The 72 sums leave the walk that stages by threads no
/// register to spare: it takes its window anew each step ([`super::walk_inline_edges`]).
/// Before the tensor copies, 4 / 6 / 7 / 8 rows ran 544 / 528 / 555 / 542 us (8 spilled
/// 40 bytes); 4 rows at 3 blocks an SM (80 registers) and 4 rows of 12 threads down ran
/// 1.08x and 1.10x the 6 rows' time.
#[inline]
pub const fn rows_per_thread(r: u32) -> u32 {
    match r {
        0 | 1 => 4,
        2 | 3 => 2,
        _ => 8,
    }
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32) -> u32 {
    THREADS_Y * rows_per_thread(r)
}

/// Rows of a staged plane: the tile and its y halos.
#[inline]
pub const fn staged_h(r: u32) -> u32 {
    tile_h(r) + 2 * r
}

/// Shared floats of one staged plane.
#[inline]
pub const fn plane_floats(r: u32) -> u32 {
    staged_w(r) * staged_h(r)
}

/// Whether a staged plane is filtered along y first (into a plane of `y_filtered_w`
/// columns and the tile's rows; each thread then filters its own patch along x), rather
/// than along x first (into a plane of the tile's width and every staged row; each
/// thread then filters its patch along y). The y pass covers `y_filtered_w / tile_w` of
/// the outputs' columns (1.06 with 4-wide patches) where the x pass covers
/// `staged_h / tile_h` of their rows (1.38 at r = 3, 1.25 at r = 2). y first at r = 3
/// only (H200, 512^3, A/B run 1 of the twenty-first session: r = 3 406.6 -> 382.5 us;
/// r = 2 324.6 -> 339.0, r = 1 315.7 -> 316.1); at r = 4 (one column a thread) each
/// thread's x filter would read its window one float at a time.
#[inline]
pub const fn y_first(r: u32) -> bool {
    r == 3
}

/// Whether the columns of tiles on a y side of the volume walk shorter chunks of depth:
/// one chunk more than the others (`DepthSplit::sides`: the launch adds a row of chunks,
/// which the other columns leave empty). At r = 3, where a window on a y side writes 3
/// rows of ghost cells at each plane's landing under the mapping modes, its steps cost
/// the most and its blocks finished last; 512^3 then takes 264 blocks, one wave. H200,
/// 512^3 (the seventy-second session, BENCHMARKS.md §8, runs 4-6): nearest, reflect,
/// mirror 330.5-338.0 -> 321.2-324.4 us (1.03-1.05x zero's time), wrap 353-359 -> 331-333
/// (1.06-1.07x); zero 306 -> 308-314. In every mode: taken under the mapping modes alone
/// (the host choosing the grid by the mode), zero, on `main`'s grid, ran 2-4% slower.
/// Columns on an x side are half the columns at 512^3: giving them more chunks would take
/// a second wave.
#[inline]
pub const fn side_chunks(r: u32) -> bool {
    r == 3
}

/// Halo columns on each side of the y-filtered plane: the fewest whole groups of 4 the
/// x taps read (the staged plane's sector pads hold more).
#[inline]
pub const fn y_pad(r: u32) -> u32 {
    r.div_ceil(QX_ROW) * QX_ROW
}

/// Width of the y-filtered plane: the tile and its `y_pad` halos.
#[inline]
pub const fn y_filtered_w(r: u32) -> u32 {
    tile_w(r) + 2 * y_pad(r)
}

/// Planes the block's first pass (x, or y first) runs ahead of each thread's second pass
/// and z taps (`planes::Walk::lag`). With 1, step `q` filters plane `q` into one of two
/// once-filtered planes while each thread filters plane `q - 1` from the other: one
/// barrier a plane instead of two. At r = 4 (H200, 512^3, the twenty-second session's A/B
/// runs 2 and 3: 484.4 -> 452.1 and 485.3 -> 462.0 us); at r = 2 it gained nothing
/// (323.2 -> 321.6), at r = 3 ptxas spilled 8 bytes and it ran 6.5% slower, and at r = 1
/// the second plane does not fit two blocks an SM beside the ring of 5.
#[inline]
pub const fn lag(r: u32) -> u32 {
    if r >= 4 {
        1
    } else {
        0
    }
}

/// Shared floats of one once-filtered plane (there are `1 + lag`): y first,
/// `y_filtered_w` and the tile's rows; x first, the tile's width and every staged row.
#[inline]
pub const fn filtered_floats(r: u32) -> u32 {
    if y_first(r) {
        y_filtered_w(r) * tile_h(r)
    } else {
        tile_w(r) * staged_h(r)
    }
}

/// Where the walk's group table lies (`planes::Walk::table_at`, floats from the shared
/// base): after the ring of planes, the once-filtered planes and the barriers.
#[inline]
pub const fn table_at(r: u32) -> u32 {
    ghosts_at(r) + ghost_words(r)
}

/// Where the walk's ghost list lies (`planes::Walk::ghosts_at`, floats from the shared
/// base; even): after the barriers and their gap (`super::walk_barriers`).
#[inline]
pub const fn ghosts_at(r: u32) -> u32 {
    barriers_at(r) + super::walk_barriers(tile_map(r), ring(r))
}

/// Words of the walk's ghost list ([`super::walk_ghost_words`]).
#[inline]
pub const fn ghost_words(r: u32) -> u32 {
    super::walk_ghost_words(tile_map(r), ghosts_at(r), r, tile_box(r), ring(r), min_blocks(r), THREADS_X * THREADS_Y)
}

/// Whether the walk stages f32 planes with tensor copies where the host gives it a tile
/// map, as `conv3d_fast`'s does (`super::conv3d_fast::tile_map`): from r = 2. At r = 1
/// the ring of 5 planes and the once-filtered plane leave no room for the ghost list the
/// mapping modes need beside the copies (`ghost_words`), and zero ghost cells alone
/// gained 3.5% (the thirty-second session's A/B run 4: 323.2 -> 311.7 us). At r = 3, 4
/// (the fiftieth session, H200, 512^3, two rounds, us) zero ran 377.6-381.8 -> 307.8-310.1
/// and 438.5 -> 345.1-346.0, and every other mode faster too (r = 3 nearest 377.2 ->
/// 331.7, wrap 371.8 -> 358.0; r = 4 461.0 -> 400.5, 451.9 -> 427.0), but at 1.07-1.15x
/// and 1.16-1.24x zero's new time: past the 5% the issue asks, which the threads'
/// staging kept by being as slow under zero as under the others.
#[inline]
pub const fn tile_map(r: u32) -> bool {
    r >= 2
}

/// Whether the walk's tensor copies keep their lines in L2 past others (as
/// `conv3d_fast::tile_keep`): not here. Kept, zero ghost cells ran r = 2, 3 5-10% faster
/// but the mapping modes no faster (the seventy-fourth session, H200, 512^3, us: r = 3
/// zero 323.1 -> 291.1, nearest 323.6 -> 323.6, wrap 332.9 -> 335.6), which would take
/// them past 1.05 of zero; r = 4 no faster.
#[inline]
pub const fn tile_keep(_r: u32) -> bool {
    false
}

/// The box of the tile map: a staged plane (floats across, rows down, one plane).
#[inline]
pub const fn tile_box(r: u32) -> [u32; 3] {
    [staged_w(r), staged_h(r), 1]
}

/// Where the tensor copies' barriers lie (floats from the shared base): after the ring
/// of planes and the once-filtered planes.
#[inline]
pub const fn barriers_at(r: u32) -> u32 {
    ring(r) * plane_floats(r) + (1 + lag(r)) * filtered_floats(r)
}

/// Words of the walk's group table ([`super::walk_table_words`]): none at r = 1, where
/// the ring of 5 planes and the once-filtered plane leave two blocks 4.9 KB short of it.
#[inline]
pub const fn table_words(r: u32) -> u32 {
    super::walk_table_words(table_at(r), plane_floats(r), min_blocks(r))
}

/// Shared floats a block needs: the ring of planes, the once-filtered planes, then the
/// group table.
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    table_at(r) + table_words(r)
}

/// The fewest waves of blocks the depth split aims at (`DepthSplit::waves`): 3 at r = 1,
/// where memory dominates (H200, 512^3 with 16-byte pads: 357 / 340 / 341 us in 1 / 2 /
/// 4 waves; with sector pads 317-318 / 315-316 / 316-317 in 2 / 3 / 4), and at r = 2
/// since the walk's group table evened out the blocks (twentieth session, A/B run 6:
/// 334.2 / 327.3 / 325.8 us in 1 / 2 / 3; before it 344-346 / 346 / 346-348), else 1: at
/// r = 3, 4 they add halo planes (run 6: r = 3 409.7 / 417.1 / 422.8, r = 4 486.1 / 488.4 /
/// 494.0); on tensor copies too (the fiftieth session's run 6: r = 3 308.0 / 309.9-313.0 /
/// 313.3-314.6, r = 4 343.6 / 344.3-345.1 / 359.4-363.6 in 1 / 2 / 3). One wave at r = 1,
/// 2 (thirtieth session): 339.9 / 335.8 against 317.4 / 326.4.
#[inline]
pub const fn waves(r: u32) -> u32 {
    if r <= 2 {
        3
    } else {
        1
    }
}

/// Whether blocks walk balanced ranges of the depth (`conv3d_fast::balanced`): at no
/// radius, where each plane is read more than it is computed on (there, 8-19% slower).
#[inline]
pub const fn balanced(_r: u32) -> bool {
    false
}

/// Blocks per SM the launch bounds ask for.
#[inline]
pub const fn min_blocks(_r: u32) -> u32 {
    2
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_separable",
    dim: 3,
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
    summary: "ours: rank-1 3D masks in one pass, x then y filters on chip, z through register patches",
};

/// As `conv3d_fast`: one block per (`tile_w` x 8K column, chunk of depth), the chunks re-cut
/// by the launch to fill the GPU's last wave of blocks.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let walk = (waves(r), balanced(r), side_chunks(r));
    super::conv3d_fast::walk_launch(p, (tile_w(r), tile_h(r)), shared_floats(r), walk)
}

// Tensor copies land in whole ring slots: each 128-byte aligned (a multiple of 32
// floats), and the barriers after them 8-byte aligned.
const _: () = {
    let mut r = 1;
    while r <= MAX_RADIUS {
        assert!(plane_floats(r).is_multiple_of(32) && barriers_at(r).is_multiple_of(2));
        assert!(crate::tile_map::box_bytes(tile_box(r)) == 4 * plane_floats(r));
        r += 1;
    }
};
