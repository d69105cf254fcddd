//! `conv3d_fast` (kernels-gpu/src/conv3d_fast.rs): compile-time radius. A block owns a
//! 128 x 8K column of outputs and a chunk of depth (from r = 2 an equal share of all
//! columns' planes: [`balanced`]); it streams the input planes of that column through a
//! ring of shared buffers (16-byte `cp.async`, several planes ahead), so each input plane
//! is read once per column; each thread adds each input plane into the 4-wide x K-tall
//! register patches of the `2r+1` output planes it touches.
use crate::shape::{blocks, MAX_GRID_X, MAX_GRID_YZ};
use crate::{masks, DepthSplit, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads across a block: one warp.
pub const THREADS_X: u32 = 32;
/// Threads down a block.
pub const THREADS_Y: u32 = 8;
/// Outputs per thread across (one F4).
pub const QX: u32 = 4;
/// Output tile width of a block.
pub const TILE_W: u32 = THREADS_X * QX;

/// Outputs across per thread at radius `r` (the walks' geometry, as `conv3d_separable`'s):
/// [`QX`] at every radius.
#[inline]
pub const fn qx(_r: u32) -> u32 {
    QX
}

/// Output tile width of a block at radius `r`: [`TILE_W`] at every radius.
#[inline]
pub const fn tile_w(_r: u32) -> u32 {
    TILE_W
}
/// Output planes per chunk of depth in the grid `launch_shape` returns; the host's launch
/// then picks the chunk count for the GPU at hand (`LaunchShape::depth`): 128^3 at r = 2
/// has 8 columns, and chunks of 64 (16 blocks) ran at 181 us, slower than conv3d_const.
pub const CHUNK_Z: u32 = 64;

/// Planes per chunk when depth `d` is cut into `gz` chunks (the launch's grid depth,
/// from which the kernel derives it): every chunk but the last is full, none is empty.
#[inline]
pub const fn chunk_z(d: u32, gz: u32) -> u32 {
    if gz == 0 {
        d
    } else {
        d.div_ceil(gz)
    }
}

/// Planes per chunk of a column's blocks in a grid `gz` chunks deep: [`chunk_z`], or with
/// `sides` (`DepthSplit::sides`) for a column on no y side, that of one chunk fewer (the
/// grid's last row of chunks is the y sides' alone). Either way `gz` chunks cover the
/// depth, the later ones possibly empty.
#[inline]
pub const fn column_chunk(d: u32, gz: u32, sides: bool, y_side: bool) -> u32 {
    if sides && !y_side {
        chunk_z(d, gz.saturating_sub(1))
    } else {
        chunk_z(d, gz)
    }
}

/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 3;

/// Output rows per thread: each thread holds `2r+1` patches of this many rows (one per
/// output plane an input plane touches), so registers grow as `4·K·(2r+1)`.
#[inline]
pub const fn rows_per_thread(r: u32) -> u32 {
    match r {
        0 | 1 => 4,
        2 => 2,
        _ => 1, // 2 rows at r = 3: 56 accumulators, and ptxas spills at 128 registers
    }
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32) -> u32 {
    THREADS_Y * rows_per_thread(r)
}

/// Halo cells staged on each side of a tile: whole sectors, as the 2D kernels' (H200:
/// zero ran 5-11% faster than with 16-byte pads, conv3d_fast r = 1 349 -> 330 us). The
/// mapping modes keep up because a border block stages only the edge cells taps read,
/// one per thread (`stage::EdgeCell`): 1 of each row's 8 at r = 1.
pub use super::pad;

/// The fewest waves of blocks the depth split aims at (`DepthSplit::waves`): 3 at
/// r <= 1, where memory dominates (H200, 512^3 r = 1: 370 / 349 / 349 us in 1 / 2 / 4
/// waves with 16-byte pads; with sector pads 333-336 / 329-330 / 328-329 in 2 / 3 / 4;
/// with the group table 345.5 in 1, 328.4 in 3), else 1 (r = 2: 807 / 817 / 835; from
/// r = 2 the blocks are [`balanced`] instead).
#[inline]
pub const fn waves(r: u32) -> u32 {
    if r <= 1 {
        3
    } else {
        1
    }
}

/// Whether blocks walk balanced ranges of the depth (`planes::walk`): one block per slot
/// of the GPU, each taking an equal share of all columns' planes ([`balanced_range`])
/// instead of one chunk of one column, so no SM idles while others finish. At r >= 2,
/// where arithmetic dominates (H200, 512^3, 2 rounds: r = 2 785.6 -> 767.0 us, r = 3
/// 2034.1 -> 1979.8); at r = 1, where memory does, 328.7 -> 368.2 in one wave of
/// balanced blocks against three waves of chunks (so too `conv3d_separable`: 318.4 /
/// 326.6 / 384.2 / 466.0 -> 369.8 / 388.4 / 417.9 / 524.3 at r = 1..4): neighbouring
/// columns' shares start at other planes, so the halos they share are read from DRAM
/// again (ncu, r = 1: DRAM reads +14%).
#[inline]
pub const fn balanced(r: u32) -> bool {
    r >= 2
}

/// Units of a walk's balanced shares: its `tile_w` x `tile_h` columns times the planes,
/// numbered a column after another (column-major over x then y), plane within column.
#[inline]
pub const fn walk_units([w, h, d]: [u32; 3], (tile_w, tile_h): (u32, u32)) -> u32 {
    w.div_ceil(tile_w) * h.div_ceil(tile_h) * d
}

/// Block `b` of `blocks`' share of `units` (a walk's columns x planes, column by column):
/// units `start .. end`, contiguous, every unit in exactly one share, the shares' lengths
/// within one of each other (none empty while `blocks <= units`).
#[inline]
pub const fn balanced_range(b: u32, blocks: u32, units: u32) -> (u32, u32) {
    let blocks = if blocks == 0 { 1 } else { blocks };
    let (base, extra) = (units / blocks, units % blocks);
    let start = b * base + if b < extra { b } else { extra };
    (start, start + base + (b < extra) as u32)
}

/// Planes in flight ahead of the one being read: deep where memory dominates (r <= 1)
/// and where planes come by tensor copies (wrap's ghost cells start with their plane's
/// copy, `planes::walk`).
#[inline]
pub const fn ahead(r: u32) -> u32 {
    if r <= 1 || tile_map(r) {
        3
    } else {
        2
    }
}

/// Planes the block's shared pass over a staged plane runs ahead of the patches'
/// (`planes::Walk::lag`): none, `conv3d_fast` has no shared pass.
#[inline]
pub const fn lag(_r: u32) -> u32 {
    0
}

/// Shared plane buffers: the plane being read, the one read before it (some threads may
/// still read it while others start the next copies: one barrier per plane), and those in
/// flight.
#[inline]
pub const fn ring(r: u32) -> u32 {
    ahead(r) + 2
}

/// Width of a staged row: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32) -> u32 {
    TILE_W + 2 * pad(r)
}

/// Shared floats of one staged plane.
#[inline]
pub const fn plane_floats(r: u32) -> u32 {
    staged_w(r) * (tile_h(r) + 2 * r)
}

/// Whether y-side columns walk shorter chunks (`conv3d_separable::side_chunks`): never
/// here.
#[inline]
pub const fn side_chunks(_r: u32) -> bool {
    false
}

/// Whether the walk stages f32 planes with tensor copies where the host gives it a tile
/// map (`crate::tile_map`; in every mode, the threads writing the ghost cells after the
/// copy, `planes::segment`): one instruction a plane instead of each thread's 16-byte
/// copies. At r = 1 alone: there every mode's ghost cells stay within 5% of zero's time
/// on the copies (the thirty-fifth session); at r = 2 wrap took 1.075x, and r = 3
/// spilled (the balanced walks, r >= 2, held the next unit across the copied segment).
/// Taken in chunks instead (no spill), with the taps baked, r = 2, 3 ran zero 4-6% faster
/// but the mapping modes slower than by threads (the fiftieth session, H200, 512^3, us:
/// r = 2 710 -> 668-671, nearest 710 -> 721, wrap 710 -> 750; r = 3 1944-1958 ->
/// 1875-1880, nearest 1993). Copies for the columns inside the volume alone, the border
/// columns by threads, ran r = 2's mapping modes 1.09-1.23x zero (the sixty-seventh
/// session, `docs/experiments/conv3d-fast-r2-copies-inside*.patch`).
#[inline]
pub const fn tile_map(r: u32) -> bool {
    r == 1
}

/// Whether the walk's tensor copies keep their lines in L2 past others (`evict_last`,
/// `planes::Walk::tile_keep`): the halo rows a column's block copies, the neighbouring
/// columns' blocks copy again some planes later. At r = 1 every mode ran faster (the
/// seventy-fourth session, H200, 512^3: zero 313.5 -> 299.2 us, the others 298-304).
#[inline]
pub const fn tile_keep(r: u32) -> bool {
    tile_map(r)
}

/// The box of the tile map: a staged plane, in floats across, rows down and planes
/// (one), as `planes::walk` reads it from `(x0 - pad, y0 - r, z)`.
#[inline]
pub const fn tile_box(r: u32) -> [u32; 3] {
    [staged_w(r), tile_h(r) + 2 * r, 1]
}

/// Where the tensor copies' barriers lie (floats from the shared base), one a ring slot
/// where the radius takes them: after the ring of planes.
#[inline]
pub const fn barriers_at(r: u32) -> u32 {
    ring(r) * plane_floats(r)
}

/// Where the walk's group table lies (`planes::Walk::table_at`, floats from the shared
/// base): after the ring of planes and the barriers.
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

/// Words of the walk's group table ([`super::walk_table_words`]; it fits at every radius).
#[inline]
pub const fn table_words(r: u32) -> u32 {
    super::walk_table_words(table_at(r), plane_floats(r), min_blocks(r))
}

/// Shared floats a block needs: the ring of planes, then the group table.
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    table_at(r) + table_words(r)
}

/// The driver JIT's optimization level for this entry's modules with the taps baked in
/// ([`crate::family::Entry::baked_jit_level`]; the default, 4, is ptxas's `-O3`): 1 from
/// r = 2. At `-O3`, ptxas (12.9 and 13.0) gives r = 3's baked loop 268 FFMAs of 1372 whose
/// two register sources share a register bank (none with the taps read from the symbol,
/// none at `-O1`): ncu counted 0.29 dispatch stalls an issue against 0.02, and its 11.5%
/// fewer instructions ran no faster. H200, 512³, three rounds each, µs: r = 3 1944.7–1961.5
/// -> 1741.5–1747.3, r = 2 709.4–712.4 -> 702.1–705.2; r = 1 the same (308.5–315.9 against
/// 310.6–311.9), so it keeps the default.
#[inline]
pub const fn baked_jit_level(r: u32) -> u32 {
    if r >= 2 {
        1
    } else {
        crate::family::DEFAULT_JIT_LEVEL
    }
}

/// Blocks per SM the launch bounds ask for (2: up to 128 registers for the patches).
#[inline]
pub const fn min_blocks(_r: u32) -> u32 {
    2
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_fast",
    dim: 3,
    mask: MaskLoc::Const(masks::MASK_3D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: false,
    compiled_channels: None,
    pixels: crate::family::Pixels::Both,
    separable: false,
    launch_shape,
    summary: "ours: compile-time radius, planes streamed along depth through a shared ring",
};

/// One block per (128 x 8K column, chunk of depth): chunks of [`CHUNK_Z`] planes, which
/// the launch re-cuts to fill the GPU's last wave of blocks, in at least `waves(r)` waves
/// (`depth`); from r = 2 ([`balanced`]), a 1D grid of resident blocks instead.
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    walk_launch(p, (TILE_W, tile_h(r)), shared_floats(r), (waves(r), balanced(r), side_chunks(r)))
}

/// The launch of a walk along depth (`kernels-gpu/src/planes.rs`, shared with
/// `conv3d_separable`): one block of `THREADS_X` x `THREADS_Y` per (`tile_w` x `tile_h`
/// column, chunk of depth), `shared_floats` of shared memory; `balanced`: a 1D grid of
/// persistent blocks (the launch caps it at the resident ones), each taking
/// [`balanced_range`] of the [`walk_units`], at least `4r` of them; else chunks of depth
/// in at least `waves` waves, y-side columns in one chunk more where `sides`.
pub(crate) fn walk_launch(
    p: &Problem,
    (tile_w, tile_h): (u32, u32),
    shared_floats: u32,
    (waves, balanced, sides): (u32, bool, bool),
) -> Result<LaunchShape, ShapeError> {
    let [w, h, d] = p.extent;
    let gx = blocks(w as usize, tile_w as usize, MAX_GRID_X)?;
    let gy = blocks(h as usize, tile_h as usize, MAX_GRID_YZ)?;
    if balanced {
        // Columns x planes: at most the elements (< 2^31).
        let units = walk_units(p.extent, (tile_w, tile_h));
        let least = (4 * p.max_radius()).max(1);
        return Ok(LaunchShape {
            grid: ((units / least).clamp(1, MAX_GRID_X), 1, 1),
            block: (THREADS_X, THREADS_Y, 1),
            shared_bytes: shared_floats * 4,
            persistent: true,
            depth: None,
        });
    }
    let depth = DepthSplit {
        planes: d,
        halo: 2 * p.max_radius(),
        waves,
        sides,
    };
    // About ceil(d / CHUNK_Z) chunks: chunk_z(d, gz) <= CHUNK_Z, and none is empty.
    let gz = depth.whole(blocks(d as usize, CHUNK_Z as usize, MAX_GRID_YZ)?);
    Ok(LaunchShape {
        grid: (gx, gy, gz),
        block: (THREADS_X, THREADS_Y, 1),
        shared_bytes: shared_floats * 4,
        persistent: false,
        depth: Some(depth),
    })
}

// Tensor copies land in whole ring slots: each 128-byte aligned (a multiple of 32
// floats), and the barriers after them 8-byte aligned.
const _: () = {
    let mut r = 0;
    while r <= MAX_RADIUS {
        assert!(plane_floats(r).is_multiple_of(32) && barriers_at(r).is_multiple_of(2));
        assert!(crate::tile_map::box_bytes(tile_box(r)) == 4 * plane_floats(r));
        r += 1;
    }
};

#[cfg(test)]
mod tests {
    use super::{balanced_range, column_chunk};

    #[test]
    fn column_chunks_cover_the_depth_once_in_any_grid() {
        for d in 1..200u32 {
            for gz in 1..24u32 {
                for (sides, y_side) in [(false, false), (true, false), (true, true)] {
                    let c = column_chunk(d, gz, sides, y_side);
                    // Block z walks z·c .. min(z·c + c, d): contiguous, disjoint, and the
                    // grid's gz chunks reach the depth.
                    assert!(c >= 1 && c * gz >= d, "d {d} gz {gz} sides {sides} y_side {y_side}: {c}");
                    if sides && !y_side && gz > 1 {
                        assert!(c * (gz - 1) >= d, "d {d} gz {gz}: the last row is the y sides'");
                    }
                }
            }
        }
    }

    #[test]
    fn balanced_shares_cover_every_unit_once_and_differ_by_at_most_one() {
        for units in [1, 2, 7, 263, 264, 265, 32_768, 1 << 30] {
            for blocks in [1, 2, 7, 263, 264, 265] {
                let mut next = 0;
                for b in 0..blocks {
                    let (start, end) = balanced_range(b, blocks, units);
                    assert_eq!(start, next, "{units} units, block {b} of {blocks}");
                    assert!(end - start == units / blocks || end - start == units / blocks + 1);
                    next = end;
                }
                assert_eq!(next, units);
            }
        }
    }
}
