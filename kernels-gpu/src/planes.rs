//! The walk along depth shared by the fast 3D kernels (`conv3d_fast`, `conv3d_separable`):
//! a block owns a `TILE_W` x `tile_h` column of outputs and a chunk of depth (the launch's
//! gridDim.z chunks), or, balanced, an equal share of all columns' planes (a 1D grid of
//! resident blocks), which it walks a column's run at a time. The input planes of its
//! column, with `pd` columns and `R` rows of halo, stream through a ring of `ring` shared
//! buffers with 16-byte `cp.async`, or one tensor copy a plane where the family's radius
//! takes them (`tile_map`; the threads then write the ghost cells of modes other than
//! zero), `ahead` planes ahead of the one in use (one barrier per plane: the ring holds
//! `ahead + 2`).
//! Each thread keeps one register patch per output plane the current input plane touches
//! (`2R+1`): the kernel adds the plane into them, the walk stores the one that is complete
//! and moves the others down.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv3d_fast::{balanced_range, column_chunk, walk_units};
use layout::families::{walk_held, walk_inline_edges, walk_list_words, WALK_HELD_MAX, WALK_LIST_HEAD};
use layout::mode::{code, map_index, zero_ghosts};
use layout::tile_map::box_bytes;

/// Ghost cells a thread holds in registers at most (`segment`).
const HELD: usize = WALK_HELD_MAX as usize;

/// A held cell's offset when the thread has none.
const NO_CELL: u32 = u32::MAX;

/// The ghost list's mark of a cell read from the plane in global memory (its element
/// index below: planes hold fewer than 2^31) rather than from the slot.
const FAR: u32 = 1 << 31;

/// A family's walk geometry (its `layout` functions at its radius).
#[derive(Clone, Copy)]
pub struct Walk {
    /// Threads of a block across and down.
    pub threads: (u32, u32),
    /// Outputs across a thread's patch: `patch::QX`, or 1 (a column: lane 0 of the
    /// patches, stored with `patch::store_column`).
    pub qx: u32,
    /// Output columns of a block (`qx` per thread across).
    pub tile_w: u32,
    /// Output rows of a block.
    pub tile_h: u32,
    /// Output rows per thread (its patch is `QX` x `k`).
    pub k: u32,
    /// Halo columns staged on each side (a multiple of 4).
    pub pd: u32,
    /// Floats of one staged plane (`(tile_w + 2pd)·(tile_h + 2R)`).
    pub slot_floats: u32,
    /// Shared plane buffers.
    pub ring: u32,
    /// Planes in flight ahead of the one being read (`ring >= ahead + 2`).
    pub ahead: u32,
    /// Steps the block's shared pass over a plane (`first`) runs ahead of the patches'
    /// `add`: 0 or 1.
    pub lag: u32,
    /// Blocks take balanced ranges of all columns' planes (`balanced_range`, a 1D grid)
    /// rather than one chunk of one column each.
    pub balanced: bool,
    /// Where the group table lies (floats from the shared base; `stage::group_table`).
    pub table_at: u32,
    /// Its words (0: no table).
    pub table_words: u32,
    /// Whether f32 planes come by tensor copies where the host filled the tile map
    /// (`ConvArgs::tile_map`): the family's `tile_map` at this radius.
    pub tile_map: bool,
    /// Whether those copies keep their lines in L2 past others (`evict_last`): the
    /// family's `tile_keep` at this radius.
    pub tile_keep: bool,
    /// The map's box (a staged plane: `tile_w + 2pd` x `tile_h + 2R` x 1).
    pub tile_box: [u32; 3],
    /// Where the copies' barriers lie, one a slot (floats from the shared base).
    pub barriers_at: u32,
    /// Where the ghost list lies (floats from the shared base; `segment`).
    pub ghosts_at: u32,
    /// Its words (0: mapping modes stage their planes by threads).
    pub ghost_words: u32,
    /// Whether y-side columns take one chunk more (the family's `side_chunks`; the grid
    /// has a row of chunks more: `DepthSplit::sides`).
    pub side_chunks: bool,
}

/// The [`Walk`] of a family at radius `$r` for the launch of `$a`: `$family` is its
/// `layout::families` module (the same geometry functions in each 3D fast family).
#[macro_export]
macro_rules! walk_of {
    ($family:ident, $r:expr, $a:expr) => {{
        use layout::families::$family as f;
        $crate::planes::Walk {
            threads: (f::THREADS_X, f::THREADS_Y),
            qx: f::qx($r),
            tile_w: f::tile_w($r),
            tile_h: f::tile_h($r),
            k: f::rows_per_thread($r),
            pd: f::pad($r),
            slot_floats: f::plane_floats($r),
            ring: f::ring($r),
            ahead: f::ahead($r),
            lag: f::lag($r),
            balanced: f::balanced($r),
            table_at: f::table_at($r),
            table_words: f::table_words($r),
            tile_map: f::tile_map($r),
            tile_keep: f::tile_keep($r),
            tile_box: f::tile_box($r),
            barriers_at: f::barriers_at($r),
            ghosts_at: f::ghosts_at($r),
            ghost_words: f::ghost_words($r),
            side_chunks: f::side_chunks($r),
        }
    }};
}

/// Walks the block's chunk of depth (or its balanced share, a column's run at a time,
/// each run as a chunk): for each input plane `q`, once it is staged (the slot: the
/// staged plane, rows `tile_w + 2pd` floats apart), `first(q, slot)` runs the
/// block's shared pass over it, and `lag` steps later (after `lag` more barriers)
/// `add(q, slot, acc)` adds it into the patches (`acc[j]` sums output plane `q - 2R + j`
/// of the chunk). With lag 1 step `q` runs `first` on plane `q` and `add` on plane
/// `q - 1`, with one barrier between: what `first` writes for plane `q`, `add` reads
/// after the next barrier, and `first` must not overwrite what `add` of plane `q - 1`
/// reads in the same step. Every thread of the block calls it (it contains barriers);
/// `first` and `add` may add barriers of their own (every thread passes them) but must
/// not touch the ring's other slots.
///
/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); the launch has blocks of
/// `threads` over a grid of columns x chunks (balanced: any 1D grid), with
/// `ring·slot_floats` shared floats (whatever `add` uses past them, then the group table:
/// `table_words` at `table_at`, 0 or `slot_floats / 4`); `tile_w = qx·threads.0`,
/// `tile_h = k·threads.1`, `qx` is `patch::QX` or 1; `lag` is 0 or 1 (the ring's
/// `ring >= ahead + 2` keeps plane `q`'s slot until step `q + 1` ends).
#[inline(always)]
pub unsafe fn walk<const R: u32>(
    a: &ConvArgs,
    g: Walk,
    mut first: impl FnMut(u32, *const f32),
    mut add: impl FnMut(u32, *const f32, &mut [patch::Acc; patch::MAX_PLANES]),
) {
    // Balanced: one segment (a column's run of planes) at a time, with a barrier after
    // each, so that no thread stages the next while another reads this one's ring. Each
    // takes the extents, the mode, the share and the thread's indices anew, so that what
    // follows from them is not hoisted out of the loop and held across it in registers
    // (at 128, that spilled): only `unit` lives from one segment to the next. One call
    // site: with two, LLVM no longer inlined the staging into them.
    let mut unit = if g.balanced { share(a, g).0 } else { 0 };
    loop {
        let (args, segment_at) = if g.balanced {
            let mut args = *a;
            args.extent = a.extent.map(computed_u32);
            args.mode = computed_u32(a.mode);
            let end = share(&args, g).1;
            if unit >= end {
                break;
            }
            // (At least 1 as divisors: a volume with units is not empty.)
            let (d, columns) = (args.extent[2].max(1), args.extent[0].div_ceil(g.tile_w).max(1));
            let (column, z_begin) = (unit / d, unit % d);
            let steps = (d - z_begin).min(end - unit);
            unit += steps;
            let (x0, y0) = ((column % columns) * g.tile_w, (column / columns) * g.tile_h);
            (args, (x0, y0, z_begin, steps))
        } else {
            // The block's chunk of its column: with `side_chunks`, the launch's last row of
            // chunks is the y sides' alone, the other columns cut into one fewer.
            let y0 = block_y() * g.tile_h;
            let y_side = y0 < R || y0 + g.tile_h + R > a.extent[1];
            let chunk = column_chunk(a.extent[2], grid_dim_z(), g.side_chunks, y_side);
            let z_begin = block_z() * chunk;
            let steps = a.extent[2].saturating_sub(z_begin).min(chunk);
            if steps == 0 {
                break;
            }
            (*a, (block_x() * g.tile_w, y0, z_begin, steps))
        };
        // SAFETY: forwarded from the contract; the segment lies inside the volume.
        unsafe { segment::<R>(&args, g, segment_at, &mut first, &mut add) };
        if !g.balanced {
            break;
        }
        sync_threads();
    }
}

/// The block's balanced share of the `walk_units`, `start .. end` (at most
/// `w·h·d < 2^31`); none in an empty volume.
#[inline(always)]
fn share(a: &ConvArgs, g: Walk) -> (u32, u32) {
    if a.extent.contains(&0) {
        return (0, 0);
    }
    let units = walk_units(a.extent, (g.tile_w, g.tile_h));
    balanced_range(computed_u32(block_x()), computed_u32(grid_dim_x()), units)
}

/// One segment of [`walk`]: the `steps` output planes from `z_begin` of the column at
/// (`x0`, `y0`).
///
/// # Safety
/// As [`walk`]'s; `z_begin + steps <= d`.
#[inline(always)]
unsafe fn segment<const R: u32>(
    a: &ConvArgs,
    g: Walk,
    (x0, y0, z_begin, steps): (u32, u32, u32, u32),
    first: &mut impl FnMut(u32, *const f32),
    add: &mut impl FnMut(u32, *const f32, &mut [patch::Acc; patch::MAX_PLANES]),
) {
    let (n, p) = (input(a), output(a));
    let [w, h, d] = a.extent;
    let (tx, ty) = if g.balanced {
        (computed_u32(thread_x()), computed_u32(thread_y()))
    } else {
        (thread_x(), thread_y())
    };
    let tid = ty * g.threads.0 + tx;
    let threads = g.threads.0 * g.threads.1;
    let plane_len = w as usize * h as usize;
    // Staged plane q is input plane z_begin - R + q, held in slot q % ring: its window for
    // the volume's extents, the segment's origin and the mode (the segment's own, or the
    // same numbers taken anew in a step: `walk_inline_edges`).
    let window_of = |q: u32, [w, h, d]: [u32; 3], (x0, y0, z_begin): (u32, u32, u32), mode: u32| {
        // A plane before or past the volume reads the plane the mode maps it to, or is
        // all fill values (zero, constant).
        let iz = map_index(mode, (z_begin + q) as i32 - R as i32, d as i32);
        stage::Window {
            plane: n.wrapping_add(iz.max(0) as usize * (w as usize * h as usize)),
            row_pitch: w,
            w,
            h,
            channels: 1,
            gx0: x0.wrapping_sub(g.pd),
            gy0: y0.wrapping_sub(R),
            sw: g.tile_w + 2 * g.pd,
            sh: g.tile_h + 2 * R,
            mode,
            fill: a.fill,
            ghost: iz < 0,
            unread: g.pd - R,
            inline_border: false,
        }
    };
    let window = |q: u32| window_of(q, [w, h, d], (x0, y0, z_begin), a.mode);
    // Each step's work on the staged plane (the patches' taps and stores), the same in both
    // ways of staging below (each its own loop: one loop for both spilled at 128 registers).
    macro_rules! consume {
        ($planes:ident, $previous:ident, $acc:ident) => {
            #[inline(always)]
            |step: u32, slot: *const f32| {
                if g.lag == 0 || step < $planes {
                    first(step, slot);
                }
                // The plane `add` takes: this step's, or with lag 1 the step before's.
                let (q, at) = if g.lag == 0 {
                    (step, slot)
                } else {
                    (step.wrapping_sub(1), $previous)
                };
                $previous = slot;
                if step < g.lag {
                    return;
                }
                add(q, at, &mut $acc);
                if q >= 2 * R {
                    let out = p.wrapping_add((z_begin + q - 2 * R) as usize * plane_len);
                    let (x, y) = (x0 + g.qx * tx, y0 + ty * g.k);
                    // SAFETY: output plane z_begin + q - 2R < z_begin + steps <= d lies inside P.
                    unsafe {
                        if g.qx == 1 {
                            patch::store_column(&$acc[0], g.k, out, w, w, h, x, y)
                        } else {
                            patch::store(&$acc[0], g.k, out, w, w, h, x, y)
                        }
                    };
                }
                patch::rotate(&mut $acc, 2 * R as usize + 1, patch::ZERO);
            }
        };
    }
    // Every plane of the segment comes by a tensor copy where the host filled the tile
    // map (each plane from the one the mode maps it to). The copies read cells outside
    // the volume as zeros: under another mode, the threads then write the window's ghost
    // cells (its ghost list, below). Each copy completes on its slot's barrier, whose
    // phase each thread waits for: the slot's uses in this segment so far, modulo 2 (the
    // barriers are made anew for each segment).
    let w0 = window(0);
    let zero = zero_ghosts(a.mode, a.fill);
    let copied = g.tile_map && a.tile_map != 0 && (zero || g.ghost_words > 0);
    if !copied {
        // Every plane's window has the same columns and rows: this thread's edge cell and
        // what each of its groups takes, once.
        let groups = if g.table_words > 0 && stage::table_fits(&window(0)) {
            let table = 4 * g.table_at;
            // SAFETY: the table's words lie past the ring and whatever `add` uses (the
            // family's layout: `table_at`, `table_words`); the window's width is a multiple
            // of 4; it fits.
            unsafe { stage::group_table(&window(0), table, tid, threads) };
            Some(table)
        } else {
            None
        };
        let walk = stage::Walking {
            edge: stage::EdgeCell::of(&window(0), tid, threads, true),
            raw: None,
            groups,
        };
        // SAFETY: the ring's slots (slot_floats each from the dynamic shared base); no copy
        // is in flight yet.
        unsafe {
            stage::fill_unread(
                &window(0),
                &walk,
                (shared_addr(shared_f32()), 4 * g.slot_floats, g.ring),
                tid,
                threads,
            )
        };
        // Staged planes; with lag 1 the last step stages and filters none.
        let planes = steps + 2 * R;
        let stage_plane = |q: u32, buf: u32| {
            if g.lag == 0 || q < planes {
                if !walk_inline_edges(R) {
                    // SAFETY: the contract covers n, w, h and d; a slot holds slot_floats =
                    // sw·sh floats inside the ring; x0 and pd are multiples of 4.
                    return unsafe { stage::walked::<_, false>(window(q), buf, &walk, tid, threads) };
                }
                // Where the patches hold nearly every register (`walk_inline_edges`), the
                // window, its edge cell and the thread's index taken anew each step rather
                // than held across the loop, and the uncovered edge cells staged in line:
                // ptxas then spills none.
                let origin = (computed_u32(x0), computed_u32(y0), computed_u32(z_begin));
                let win = window_of(q, a.extent.map(computed_u32), origin, computed_u32(a.mode));
                let (tx, ty) = thread_xy_here();
                let tid = ty * g.threads.0 + tx;
                let walk = stage::Walking {
                    edge: stage::EdgeCell::of(&win, tid, threads, true),
                    ..walk
                };
                // SAFETY: as above.
                unsafe { stage::walked::<_, true>(win, buf, &walk, tid, threads) }
            }
        };
        let mut acc = [patch::ZERO; patch::MAX_PLANES];
        let mut previous = core::ptr::null::<f32>();
        streamed(
            planes + g.lag,
            (g.ahead, g.ring, g.slot_floats),
            stage_plane,
            |_, _| {},
            consume!(planes, previous, acc),
        );
        return;
    }
    let bars = shared_addr(shared_f32()) + 4 * g.barriers_at;
    // The ghost list: the count and a pad word, then for each cell of the window outside
    // the volume that a tap reads (within R of it), its byte offset in a slot and the
    // cell it reads (the mode's mapping; none under a constant), and the stand-in cells
    // below. The window's columns and rows are the same in every plane: made once a
    // segment.
    let list = shared_addr(shared_f32()) + 4 * g.ghosts_at;
    let entries = list + 4 * WALK_LIST_HEAD;
    // Staged planes; with lag 1 the last step stages and filters none (but for a tensor
    // copy of the plane after, which keeps every step's wait alike).
    let planes = steps + 2 * R;
    let copy_plane = #[inline(always)]
    |q: u32, buf: u32| {
        if tid == 0 {
            let win = window(q);
            // The slot's last plane may have been stored by threads: order those stores
            // before the tensor copy's.
            fence_proxy_async();
            let iz = map_index(a.mode, (z_begin + q) as i32 - R as i32, d as i32);
            // SAFETY: `a.tile_map`: the map describes the input with this box; the slot
            // is 128-byte aligned (a multiple of 32 floats from the base) and its barrier
            // is used by this copy alone until it lands. A plane outside the volume (-1:
            // zero ghosts only) reads as zeros.
            unsafe {
                tile_map_load(
                    buf,
                    tile_barrier(bars, q % g.ring),
                    box_bytes(g.tile_box),
                    [win.gx0, win.gy0, iz as u32],
                    g.tile_keep,
                )
            };
        }
    };
    let copy_landed = #[inline(always)]
    |q: u32, _: u32| {
        // SAFETY: the slot's barrier, initialized below; plane q is its use q / ring.
        unsafe { barrier_wait(tile_barrier(bars, q % g.ring), (q / g.ring) & 1) };
    };
    let mut acc = [patch::ZERO; patch::MAX_PLANES];
    let mut previous = core::ptr::null::<f32>();
    let mut consume = consume!(planes, previous, acc);
    let ring = (g.ahead, g.ring, g.slot_floats);
    if !zero {
        if tid == 0 {
            // SAFETY: the list's first two words (the family's layout: `ghosts_at`,
            // 8-byte aligned); the barrier before this segment ends every read of them.
            unsafe { store_shared_u32x2(list, 0, 0) };
        }
        sync_threads();
        let (gx0, gy0, r) = (w0.gx0 as i32, w0.gy0 as i32, R as i32);
        let (wi, hi) = (w as i32, h as i32);
        // A window on neither x side takes, under a mapping mode, about as many cells
        // as one on a side: its left halo columns within R, each its own source in the
        // slot (the copy brought the value; under wrap too). Its steps then cost what a
        // side window's do, and the blocks keep in step (a side block that lags costs
        // its neighbours their shared halo rows in L2). Not the rows within R + 1 of a
        // y side, where a ghost cell of the window may read them.
        let unread = (g.pd - R) as i32;
        let x_side = gx0 + unread < 0 || gx0 + w0.sw as i32 - unread > wi;
        let even = !x_side && a.mode != code::CONSTANT;
        let mut cell = tid;
        while cell < w0.sw * w0.sh {
            let (gx, gy) = (gx0 + (cell % w0.sw) as i32, gy0 + (cell / w0.sw) as i32);
            let outside = gx < 0 || gx >= wi || gy < 0 || gy >= hi;
            let lx = gx - gx0;
            if even && !outside && lx >= unread && lx < unread + r && gy > r && gy < hi - 1 - r {
                let src = 4 * cell;
                // SAFETY: as below (these cells and the others together are at most
                // those of a window on a side).
                unsafe {
                    let k = atomic_add_shared_u32(list, 1);
                    store_shared_u32x2(entries + 8 * k, 4 * cell, src);
                }
            } else if outside && gx >= -r && gx < wi + r && gy >= -r && gy < hi + r {
                // The cell it reads: in the window (nearest, reflect and mirror always),
                // its byte offset in the slot, which the copy brought; else (wrap) its
                // element of the plane, marked FAR.
                let (mx, my) = (map_index(a.mode, gx, wi), map_index(a.mode, gy, hi));
                let (lx, ly) = (mx - gx0, my - gy0);
                let src = if a.mode == code::CONSTANT {
                    0
                } else if lx >= 0 && lx < w0.sw as i32 && ly >= 0 && ly < w0.sh as i32 {
                    4 * (ly as u32 * w0.sw + lx as u32)
                } else {
                    FAR | (my as u32 * w + mx as u32)
                };
                // SAFETY: the list's words (at most `2R(sw + sh)` cells, which
                // `ghost_words` holds), their count zeroed before the barrier above.
                unsafe {
                    let k = atomic_add_shared_u32(list, 1);
                    store_shared_u32x2(entries + 8 * k, 4 * cell, src);
                }
            }
            cell += threads;
        }
    }
    // SAFETY: a barrier a slot at `barriers_at`, inside the block's shared memory
    // (the family's layout) and used for nothing else. Its block barrier also orders
    // the ghost list before any thread reads it.
    unsafe { init_tile_barriers(bars, g.ring, tid) };
    // Plane q's ghost cells, each from the cell of the plane the mode maps q to that
    // the mode maps it to (under a constant the fill value; a plane outside the
    // volume is all fill values), written once q's copy landed, before the barrier the
    // taps read it after. A thread's first `held` cells of the list stay in registers
    // for the segment (those of one x side and one y side of a window):
    // - a source the copy brought (nearest, reflect, mirror): read from the slot at
    //   the landing, every load before the stores (a source is never a ghost cell);
    // - a source elsewhere in the plane (wrap, FAR): by `cp.async` to the thread's
    //   words of the slot's scratch when the plane's copy starts, and from there at
    //   the landing (the ring's wait for the copies of its step covers it).
    // Written a step ahead, a thread waited for a copy not landed yet (at full
    // bandwidth the copies land just in time): a step with ghost cells ran ~15%
    // longer than one without (per-warp cycle counts, conv3d_separable r = 3). A
    // window with more cells (a volume narrower than the tile) writes the rest from the
    // list, wrap's a step ahead by `cp.async` from the plane.
    // SAFETY: the list's count and entries, written before that barrier.
    let count = if zero { 0 } else { unsafe { load_shared_u32(list) } };
    let held = walk_held(R, g.tile_box, threads);
    let scratch = list + 4 * walk_list_words(R, g.tile_box);
    let scratch_at = #[inline(always)]
    |q: u32, k: usize| scratch + 4 * (((q % g.ring) * held + k as u32) * threads + tid);
    // A cell the thread does not hold reads (and discards) its own scratch word at the
    // landing: a word of the slot could be a ghost cell another thread writes then.
    let mut cells = [(NO_CELL, FAR); HELD];
    for (k, cell) in cells.iter_mut().enumerate() {
        let i = tid + k as u32 * threads;
        if (k as u32) < held && i < count {
            // SAFETY: entry i of the list (i < its count).
            *cell = unsafe { (load_shared_u32(entries + 8 * i), load_shared_u32(entries + 4 + 8 * i)) };
        }
    }
    if a.mode == code::CONSTANT {
        // Under a constant the held cells read the fill value from the thread's scratch
        // words (written once a segment; no copy touches them), as wrap's FAR cells read
        // theirs: the landing then takes every held cell the same way.
        for (k, cell) in cells.iter_mut().enumerate() {
            if (k as u32) < held && cell.0 != NO_CELL {
                cell.1 = FAR;
                for slot in 0..g.ring {
                    // SAFETY: the thread's own scratch word of the slot (the family's
                    // layout: `walk_ghost_words`), read by this thread alone.
                    unsafe { store_shared(scratch_at(slot, k), a.fill) };
                }
            }
        }
    }
    let mine = tid < count;
    let far = mine && a.mode == code::WRAP;
    let rest = held * threads < count;
    let stage = #[inline(always)]
    |q: u32, buf: u32| {
        copy_plane(q, buf);
        if far {
            let from = window(q).plane;
            for (k, &(at, src)) in cells.iter().enumerate() {
                if at != NO_CELL && src & FAR != 0 {
                    // SAFETY: the thread's word of the slot's scratch (the family's
                    // layout: `walk_ghost_words`), read by this thread alone at the
                    // plane's landing, and an element of the plane inside the input.
                    unsafe { cp_async_f1(scratch_at(q, k), from.wrapping_add((src & !FAR) as usize), 4) };
                }
            }
        }
    };
    let lead = g.ahead - 2;
    // The list's cells past the held ones of plane p, those from global memory
    // (`from_far`, a step ahead by `cp.async`) or the others.
    let rest_of = #[inline(always)]
    |p: u32, from_far: bool| {
        let slot = shared_addr(shared_f32()) + 4 * g.slot_floats * (p % g.ring);
        let mut i = tid + held * threads;
        while rest && i < count {
            // SAFETY: entry i of the list (i < its count): its offset lies in the slot,
            // whose copy landed (so it writes after the copy's zeros), and its source in
            // the slot or (FAR) inside the slot's plane of the input.
            unsafe {
                let (at, src) = (load_shared_u32(entries + 8 * i), load_shared_u32(entries + 4 + 8 * i));
                if (src & FAR != 0) == from_far {
                    if a.mode == code::CONSTANT {
                        store_shared(slot + at, a.fill)
                    } else if src & FAR == 0 {
                        store_shared(slot + at, f32::from_bits(load_shared_u32(slot + src)))
                    } else {
                        cp_async_f1(slot + at, window(p).plane.wrapping_add((src & !FAR) as usize), 4)
                    }
                }
            }
            i += threads;
        }
    };
    let fix_far = #[inline(always)]
    |p: u32| {
        if far && rest {
            // SAFETY: the slot's barrier, initialized above; plane p is its use p / ring.
            unsafe { barrier_wait(tile_barrier(bars, p % g.ring), (p / g.ring) & 1) };
            rest_of(p, true);
        }
    };
    // Planes outside the volume under a constant (all fill values): those not in
    // `const_lo .. const_lo + const_span` of the segment's planes (none in another mode).
    let (const_lo, const_span) = if a.mode == code::CONSTANT {
        let lo = R.saturating_sub(z_begin);
        (lo, d + R - z_begin - lo)
    } else {
        (0, u32::MAX)
    };
    // The others of plane q, at its landing. The held cells without a branch: each
    // loads (where the thread has no cell, its scratch word) and those with a cell
    // store. With a branch on the mode and on each cell the landing was about 40
    // instructions a warp and step of dependent tests, which every warp waited for at the
    // step's barrier (ncu, `conv3d_separable` r = 4 nearest: 11.6% more instructions and
    // 12% more time than zero; branch-free, 7.6% and 6-8%: the seventy-fifth session).
    let fix_near = #[inline(always)]
    |q: u32, slot: u32| {
        if q.wrapping_sub(const_lo) >= const_span {
            let mut i = tid;
            while i < g.slot_floats / 4 {
                // SAFETY: inside the slot (slot_floats, a multiple of 4); its copy
                // landed and no thread reads it before the next barrier.
                unsafe { store_shared_f4(slot + 16 * i, [a.fill; 4]) };
                i += threads;
            }
        } else {
            let mut v = [0.0f32; HELD];
            for (k, &(_, src)) in cells.iter().enumerate() {
                if (k as u32) < held {
                    let from = if src & FAR != 0 { scratch_at(q, k) } else { slot + src };
                    // SAFETY: a cell of the slot inside the volume, which the copy
                    // brought (it landed), or the thread's scratch word, which its
                    // `cp.async` filled (waited for by the ring; a cell without one:
                    // read by this thread alone, its value unused).
                    v[k] = f32::from_bits(unsafe { load_shared_u32(from) });
                }
            }
            for (k, &(at, _)) in cells.iter().enumerate() {
                if (k as u32) < held && at != NO_CELL {
                    // SAFETY: a ghost cell of the slot, whose copy landed (so it writes
                    // after the copy's zeros); no thread reads it before the barrier.
                    unsafe { store_shared(slot + at, v[k]) };
                }
            }
            if rest {
                rest_of(q, false);
            }
        }
    };
    streamed(
        planes + g.lag,
        ring,
        stage,
        #[inline(always)]
        |q, slot| {
            copy_landed(q, 0);
            if !zero {
                if far && rest {
                    if q == 0 {
                        // The first `lead` planes', all waited for here.
                        for p in 0..lead.min(planes) {
                            fix_far(p);
                        }
                        cp_async_commit();
                        cp_async_wait::<0>();
                    } else {
                        // Plane q's, committed at step q - lead + 1 (those of the
                        // planes after it may be pending).
                        cp_async_wait_all_but(lead - 1);
                    }
                }
                if q < planes {
                    fix_near(q, slot);
                }
            }
        },
        #[inline(always)]
        |step, slot| {
            if !zero && step + lead < planes {
                fix_far(step + lead);
            }
            consume(step, slot);
        },
    );
    // SAFETY: every copy landed and every thread passed its waits before the last
    // step's block barrier; the next segment makes them anew after a block barrier.
    unsafe { inval_tile_barriers(bars, g.ring, tid) };
}
