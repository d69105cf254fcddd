//! 2D fast: compile-time radius (one entry point per radius), register-blocked outputs.
//!
//! While one tile is computed, the next tiles' inputs (outputs + halo) stream into
//! shared memory with 16-byte `cp.async` (`device::pipelined_tiles`; persistent blocks
//! where arithmetic dominates), or, at those radii for f32 rows 16-byte aligned (and in
//! the u8 byte ring with interleaved channels), with one tensor copy a tile (TMA,
//! `device::tile_map_load`: one thread's instruction instead of every thread's copies).
//! Each thread owns a 4-wide × `K`-tall patch of outputs in registers: it reads each
//! input row of its window once (LDS.128) and adds it into every output row it touches,
//! so taps are FFMAs with the mask in uniform registers, and shared memory traffic is
//! ~(K+2R)/K window loads per output row instead of 2R+1. Geometry:
//! `layout::families::conv2d_fast`.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv2d_fast::{
    baked_min_blocks, band_h, bands, barrier_after_copy, barriers_at, border_tiles_by_copy, buffer_floats,
    byte_barriers_at, byte_ghosts, byte_qx, byte_ring, byte_rows, byte_slot_floats, byte_staged_w, byte_tile_box,
    byte_tile_h, byte_tile_map, byte_tile_w, counted, counted_at, min_blocks, pad, persistent, rows_per_thread,
    staged_w, stages, tile_box, tile_h, tile_map, BYTE_QX_MAX, BYTE_WORDS, MAX_RADIUS, QX, THREADS_X, THREADS_Y,
    TILE_W,
};
use layout::mode::zero_ghosts;
use layout::tile_map::{box_bytes, byte_box_bytes, BYTE_ELEMENT};

const _: () = assert!(
    QX == patch::QX
        && rows_per_thread(0, 1) as usize <= patch::MAX_ROWS
        && rows_per_thread(1, 2) as usize <= patch::MAX_ROWS
);

/// Threads per block.
pub(crate) const THREADS: u32 = THREADS_X * THREADS_Y;

/// Computes and stores the tile at `(x0, y0)` from its staged inputs at `s`: rows of `w`
/// floats (`C` interleaved channels) `row_pitch` apart.
///
/// # Safety
/// `p` holds `h` rows of `row_pitch` floats; `s` is the tile's staged buffer.
#[inline(always)]
unsafe fn compute<const R: u32, const C: u32, P: Pixel>(
    s: *const f32,
    p: *mut P,
    (w, h, row_pitch): (u32, u32, u32),
    (x0, y0): (u32, u32),
) {
    let k = rows_per_thread(R, C);
    let (sw, pd) = (staged_w(R, C, bytes::<P>()), pad(R, C, bytes::<P>()));
    // With channels, the thread index is read again each tile: held across the tile loop,
    // the window's address spilled around the border staging's call at three blocks an
    // SM (`image_patches_c3_r4`). One channel keeps the code it was timed with.
    let (tx, ty) = if C > 1 {
        thread_xy_here()
    } else {
        (thread_x(), thread_y())
    };
    // Band by band: the thread's rows of each in turn, one patch of registers.
    let mut band = 0;
    while band < bands(R, C) {
        let row = band * band_h(R, C) + ty * k;
        let mut acc = [patch::ZERO];
        let first = s.wrapping_add((row * sw + QX * tx) as usize);
        // SAFETY: the thread's window lies inside the staged buffer (`buffer_floats`).
        unsafe {
            patch::accumulate::<R, C>(first, sw, pd, k, R > 4, &mut acc, 1, |_, fr, fc| {
                Mask2d::get(fr * (2 * R as usize + 1) + fc)
            })
        };
        // SAFETY: the kernel's contract covers p, w, h and row_pitch.
        unsafe { patch::store(&acc[0], k, p, row_pitch, w, h, x0 + QX * tx, y0 + row) }
        band += 1;
    }
}

/// [`compute`] for a u8 tile staged as bytes in the raw slot at `raw` (rows `sw` bytes
/// apart): each thread loads the words its window reads and widens them in registers
/// (`device::widen_bytes`), so the tile is never widened into a buffer and the window
/// loads a quarter of the shared bytes. A thread filters `byte_qx` outputs across and
/// `byte_rows` down, one row after another: an output row is stored once its last input
/// row is in, so only `2R + 1` rows of sums are live (a whole 8-wide patch would not fit
/// the entry's 80 registers). Its ghost cells were staged as bytes: the fill of a
/// constant mode is a byte value (`byte_ghosts`).
///
/// # Safety
/// As [`compute`]; `raw` holds the tile's landed bytes.
#[inline(always)]
unsafe fn compute_bytes<const R: u32, const C: u32, P: Pixel>(
    raw: u32,
    p: *mut P,
    (w, h, row_pitch): (u32, u32, u32),
    (x0, y0): (u32, u32),
) {
    let (k, bq) = (byte_rows(R, C), byte_qx(R, C));
    let (sw, pd) = (byte_staged_w(R, C), pad(R, C, 1));
    let (tx, ty) = (thread_x(), thread_y());
    let first = raw + (ty * k) * sw + bq * tx;
    // The words holding the window's columns taps read: pd - R·C ..= pd + bq - 1 + R·C.
    let (q0, q1) = ((pd - R * C) / 4, (pd + bq - 1 + R * C) / 4);
    let (x, y) = (x0 + bq * tx, y0 + ty * k);
    // The whole patch inside and its rows aligned (most threads): one store a row, no test.
    let whole = y + k <= h && x + bq <= w && row_pitch.is_multiple_of(bq) && (p as usize).is_multiple_of(bq as usize);
    // Output row o sums in place o % (2R + 1) from its first input row (o) to its last.
    // The rows' loop twice, for whole patches and for the others, each with its stores
    // decided: a whole patch's row then stores with no branch or convergence barrier
    // (H200, 8192² × 3 u8, r = 1, three rounds: 132.9–136.1 -> 131.4–132.6 µs; 865
    // instructions a thread's 8 rows where about 914 were).
    let rows = #[inline(always)]
    |whole: bool| {
        let mut acc = [[0.0f32; BYTE_QX_MAX as usize]; 2 * MAX_RADIUS as usize + 1];
        let mut row_at = p.wrapping_add((y * row_pitch + x) as usize);
        for i in 0..k + 2 * R {
            let mut v = [0.0f32; 40];
            for q in q0..=q1 {
                // SAFETY: word q of the thread's window in staged row ty·k + i of the landed
                // raw slot.
                let word = unsafe { load_shared_u32(first + i * sw + 4 * q) };
                // The words between the first and last through the conversion pipe (wholly
                // read), the others without it: the split where that pipe (the `I2F`s alone:
                // ncu counts `F2IP` elsewhere) and the issue balance (H200, 8192² × 3, r = 1,
                // 4 wide: one word of 3 198.8 -> 194.7 µs, every word through it 223.8; 8
                // wide in 16 rows: two words of 4 181.0, every word 183.9; with the stores'
                // two floats an F2IP, `Pixel::store8`: two words 131.0–131.8, every word
                // 145.3–148.5; then the right edge word too 1.048x, one middle word 1.008x).
                let f = if q > q0 && q < q1 {
                    widen_bytes_cvt(word)
                } else {
                    widen_bytes(word)
                };
                v[4 * q as usize..4 * q as usize + 4].copy_from_slice(&f);
            }
            // Input row i feeds output row o through mask row i - o.
            for o in i.saturating_sub(2 * R)..=i.min(k - 1) {
                let (fr, a) = (i - o, &mut acc[(o % (2 * R + 1)) as usize]);
                for fc in 0..2 * R + 1 {
                    let m = Mask2d::get((fr * (2 * R + 1) + fc) as usize);
                    for j in 0..bq as usize {
                        a[j] = fma(m, v[(pd - R * C + fc * C) as usize + j], a[j]);
                    }
                }
            }
            if i >= 2 * R {
                let o = i - 2 * R;
                let a = &mut acc[(o % (2 * R + 1)) as usize];
                // A row's first output, from the row above's (one 64-bit add a row).
                let at = row_at;
                row_at = row_at.wrapping_add(row_pitch as usize);
                if whole && bq == 8 {
                    // SAFETY: inside the plane, aligned to 8 pixels (whole).
                    unsafe { P::store8(at, [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]) };
                } else if whole {
                    // SAFETY: inside the plane, aligned to 4 pixels (whole).
                    unsafe { P::store4(at, [a[0], a[1], a[2], a[3]]) };
                } else {
                    // Row o alone, 4 at a time, with `patch::store`'s tests at the plane's edges.
                    for g in 0..(bq / 4) as usize {
                        let q = [[a[4 * g], a[4 * g + 1], a[4 * g + 2], a[4 * g + 3]]];
                        // SAFETY: the kernel's contract covers p, w, h and row_pitch.
                        unsafe { patch::store::<P, 4>(&q, 1, p, row_pitch, w, h, x + 4 * g as u32, y + o) };
                    }
                }
                *a = [0.0; BYTE_QX_MAX as usize];
            }
            // SAFETY: an empty statement; as a memory clobber it keeps LLVM from hoisting
            // later rows' loads above this row's taps (their windows would take the
            // registers the sums need).
            unsafe { core::arch::asm!("", options(nostack, preserves_flags)) };
        }
    };
    if whole {
        rows(true)
    } else {
        rows(false)
    }
}

/// Bytes of a pixel: the staged geometry's (`layout::families::conv2d_fast::pad`).
const fn bytes<P>() -> u32 {
    core::mem::size_of::<P>() as u32
}

/// The tiles of `planes` planes of `h` rows of `w` pixels of type `P` (`C` interleaved
/// channels: a tap reads the same channel `C` pixels away) `row_pitch` pixels apart,
/// planes `row_pitch·h` apart: `conv2d_fast`'s body, and `image_patches`' with `C`
/// channels. Tiles are staged as f32; u8 windows inside the plane are copied as they are,
/// 16 bytes a copy, and widened once they landed (`stage::bytes16`).
///
/// # Safety
/// `a.input`, `a.output` hold those planes; `MASK_2D` holds the `(2R+1)^2` taps;
/// `a.tile_counter` is the host's pair of words, 0 at launch, that no other launch uses
/// meanwhile (where `counted`); launched as `layout::families::conv2d_fast` says for `C`
/// channels of `P`.
#[inline(always)]
pub(crate) unsafe fn tiles<const R: u32, const C: u32, P: Pixel>(
    a: &ConvArgs,
    [w, h, planes]: [u32; 3],
    row_pitch: u32,
) {
    let p = a.output as *mut P;
    let plane_len = row_pitch as usize * h as usize;
    let grid = [w.div_ceil(TILE_W), h.div_ceil(tile_h(R, C)), planes];
    let tid = thread_y() * THREADS_X + thread_x();
    let pd = pad(R, C, bytes::<P>());
    if byte_ring(R, C, bytes::<P>()) > 0 && byte_ghosts(a.mode, a.fill) {
        // SAFETY: forwarded; u8 tiles at r <= 1 (a ring of raw slots), ghost cells bytes.
        return unsafe { byte_tiles::<R, C, P>(a, planes, (w, h, row_pitch, plane_len), tid) };
    }
    let geometry = (TILE_W, tile_h(R, C), staged_w(R, C, bytes::<P>()));
    let window = |tile| window::<R, C, P>(a, (w, h, row_pitch, plane_len), geometry, tile);
    // Whether the tile in flight was copied as bytes (`stage::bytes16`): only with one
    // buffer (r <= 2; at r <= 1 u8 tiles come here under a constant fill that is not a
    // byte value), where the tile staged is the tile landed; the bytes land in the raw
    // area after the buffer.
    let bytes16 = core::cell::Cell::new(false);
    let raw = shared_addr(shared_f32()) + 4 * buffer_floats(R, C, bytes::<P>());
    // Tiles staged by tensor copies (f32, where the host filled the tile map): thread 0
    // starts one a tile, completing on the buffer's barrier, and every thread waits for
    // the phase of its use (`phases`: one parity bit a buffer). The copies read ghost
    // cells as zeros, so under the other modes border tiles are staged as before
    // (`mapped`: one bit a buffer, whether its tile in flight came by a tensor copy).
    let tma = tile_map(R) && bytes::<P>() == 4 && a.tile_map != 0;
    let zero_ghosts = zero_ghosts(a.mode, a.fill);
    let mapped = core::cell::Cell::new(0u32);
    // One bit a buffer: its tile in flight came by a tensor copy across the plane's border
    // under a mode other than zero, and its ghost cells are written once it lands
    // (`stage::ghosts_after_copy`; where `border_tiles_by_copy`).
    let fixing = core::cell::Cell::new(0u32);
    let bars = shared_addr(shared_f32()) + 4 * barriers_at(R, C, bytes::<P>());
    let phases = CopyPhases::default();
    if tma {
        // SAFETY: a barrier a buffer, after the buffers (`barriers_at`, `shared_floats`).
        unsafe { init_tile_barriers(bars, stages(R, C), tid) };
    }
    // Inlined even where two entries share the instantiation (conv2d_fast_rR and
    // image_patches_c1_rR): outlined, ptxas kept 120 bytes of stack a call.
    let stage = #[inline(always)]
    |[tx, ty, z]: [u32; 3], slot: u32, buf: u32| {
        let win = window([tx, ty, z]);
        // Where border tiles are staged by threads, `fixing` stays 0 and this is the
        // code they had before (`interior` evaluated only past `zero_ghosts`).
        let by_copy = if border_tiles_by_copy(R, C) {
            let interior = stage::interior(&win);
            let fix = tma && !zero_ghosts && !interior;
            fixing.set((fixing.get() & !(1 << slot)) | ((fix as u32) << slot));
            tma && (zero_ghosts || interior || fix)
        } else {
            tma && (zero_ghosts || stage::interior(&win))
        };
        if by_copy {
            mapped.set(mapped.get() | (1 << slot));
            // SAFETY: `a.tile_map`: the map describes the input with this box (`tile_box`);
            // the buffer is 128-byte aligned (a multiple of 128 bytes from the base) and
            // the barrier is the buffer's, used by this copy alone until it lands.
            return unsafe {
                start_tile_copy(tid, buf, (bars, slot), box_bytes(tile_box(R, C)), [win.gx0, win.gy0, z])
            };
        }
        mapped.set(mapped.get() & !(1 << slot));
        bytes16.set(stages(R, C) == 1 && stage::by_bytes16(&win));
        if bytes16.get() {
            // SAFETY: as below; by_bytes16.
            return unsafe { stage::bytes16(&win, raw, tid, THREADS) };
        }
        // SAFETY: the kernel's contract covers n and the extent; the buffer holds
        // buffer_floats = sw·sh floats; x0 and pad are multiples of 4.
        unsafe { stage::window(win, buf, tid, THREADS) }
    };
    // The landed tile's cursor, read only where its coordinates are needed (a border
    // tile's ghost cells): read for every tile, the baked `image_patches_c1_r4` spilled.
    let land = #[inline(always)]
    |tile: &TileCursor, slot: u32, buf: u32| {
        if (mapped.get() >> slot) & 1 != 0 {
            // SAFETY: the buffer's barrier, initialized above; its copies land in order.
            unsafe { phases.wait(bars, slot) };
            if (fixing.get() >> slot) & 1 != 0 {
                let [tx, ty, z] = tile.current();
                let win = window([tx, ty, z]);
                let (x0, y0) = (tx * TILE_W, ty * tile_h(R, C));
                // The columns and rows the taps of the tile's outputs inside the plane read.
                let x_hi = pd + TILE_W.min(w - x0) + R;
                let rows = tile_h(R, C).min(h - y0) + 2 * R;
                // SAFETY: f32 (tensor copies); the buffer holds the landed window, x_hi <=
                // pd + TILE_W + R <= sw and rows <= sh.
                unsafe {
                    stage::ghosts_after_copy(
                        win.plane as *const f32,
                        row_pitch,
                        (w, h),
                        (win.gx0, win.gy0),
                        (win.sw, win.sh),
                        (a.mode, a.fill),
                        buf,
                        (pd - R, x_hi),
                        rows,
                        (tid, THREADS),
                    )
                };
                return true; // everyone's ghost cells before the taps
            }
            // Every thread waited for the copy itself (`mapped` is the block's).
            return barrier_after_copy(R);
        }
        if bytes16.get() {
            // SAFETY: the tile `bytes16` copied (one buffer); its copies landed.
            unsafe { stage::widen16::<P>(raw, buf, buffer_floats(R, C, bytes::<P>()), tid, THREADS) };
        }
        true
    };
    let compute = #[inline(always)]
    |[tx, ty, z]: [u32; 3], s: *const f32| {
        let (x0, y0) = (tx * TILE_W, ty * tile_h(R, C));
        let out = p.wrapping_add(z as usize * plane_len);
        // SAFETY: the kernel's contract covers p and the extent; `s` is tile t's buffer.
        unsafe { compute::<R, C, P>(s, out, (w, h, row_pitch), (x0, y0)) }
    };
    let (buffers, buffer) = (stages(R, C), buffer_floats(R, C, bytes::<P>()));
    if counted(R, C, 4) {
        // The tiles past each block's first rounds are handed out by a counter
        // (`counted_tiles`): blocks that draw slower tiles take fewer, and the last
        // round ends together.
        let words = shared_addr(shared_f32()) + 4 * counted_at(R, C, bytes::<P>());
        let counter = a.tile_counter as *mut u32;
        // SAFETY: `a.tile_counter` is the launch's zeroed counter (the kernel's contract);
        // the shared memory holds the buffers, the barriers and the counter's words
        // (`shared_floats`).
        return unsafe {
            counted_tiles(
                (buffers, grid),
                (buffer, words),
                (counter, tid, true),
                |c| c,
                stage,
                land,
                compute,
            )
        };
    }
    // Tiles block_x, block_x + grid, ... in order (`walked_tiles`); at the persistent
    // radii each row of tiles rotated by its row (`TileCursor::rotated`), so that the
    // border tiles, which stage slower than the tensor copies of the others under a
    // mapping mode, fall to every block rather than to those on the image's left and
    // right columns (H200, 8192², r = 4, reflect: 1.06 of zero's time unrotated). Blocks
    // of one tile need neither.
    let cursor = if persistent(R) {
        TileCursor::rotated(grid, block_x(), grid_dim_x())
    } else {
        TileCursor::new(grid, block_x(), grid_dim_x())
    };
    let tiles = grid[0] * grid[1] * planes;
    walked_tiles(buffers, tiles, buffer, cursor, stage, land, compute)
}

/// The staged window of tile `(tx, ty)` of plane `z`, tiles `tw` × `th` staged in rows of
/// `sw` with `pad` cells of halo before them and `R` rows above: `pad - R·C` cells at
/// each end of a row no tap reads.
#[inline(always)]
fn window<const R: u32, const C: u32, P: Pixel>(
    a: &ConvArgs,
    (w, h, row_pitch, plane_len): (u32, u32, u32, usize),
    (tw, th, sw): (u32, u32, u32),
    [tx, ty, z]: [u32; 3],
) -> stage::Window<P> {
    let pd = pad(R, C, bytes::<P>());
    stage::Window {
        plane: (a.input as *const P).wrapping_add(z as usize * plane_len),
        row_pitch,
        w,
        h,
        channels: C,
        gx0: (tx * tw).wrapping_sub(pd),
        gy0: (ty * th).wrapping_sub(R),
        sw,
        sh: th + 2 * R,
        mode: a.mode,
        fill: a.fill,
        ghost: false,
        unread: pd - R * C,
        inline_border: false,
    }
}

/// The high bit of a counted byte tile's x coordinate: one tensor copy stages it
/// ([`byte_tiles`]). No grid holds 2^31 tiles a row.
const COPIED: u32 = 1 << 31;

/// [`tiles`] for u8 tiles at r <= 1: persistent blocks keep a ring of `byte_ring` raw
/// slots, each a tile's bytes (`byte_tile_w` × `byte_tile_h`), and compute each tile from
/// them ([`compute_bytes`]), so the
/// next tiles' copies fly while a block filters one. Tiles inside the image with 16-byte
/// aligned rows are copied as they are: by one tensor copy each with interleaved channels
/// where the host filled the tile map (`byte_tile_map`), else by the threads' 16-byte
/// copies ([`stage::bytes16`]); at the borders the groups
/// the mode reads from one group of the plane are copied too ([`stage::bytes16_inside`]),
/// and once the tile lands the gathered ones are moved into place, ghost groups filled,
/// and only groups across a right edge that is not a multiple of 16 bytes staged cell
/// by cell ([`stage::bytes16_edges`]); rows not 16-byte aligned are staged as bytes once
/// their turn comes ([`stage::bytes_window`]), and wait for their loads.
///
/// # Safety
/// As [`tiles`] for `planes` planes.
#[inline(always)]
unsafe fn byte_tiles<const R: u32, const C: u32, P: Pixel>(
    a: &ConvArgs,
    planes: u32,
    (w, h, row_pitch, plane_len): (u32, u32, u32, usize),
    tid: u32,
) {
    let p = a.output as *mut P;
    let geometry = (byte_tile_w(R, C), byte_tile_h(R, C), byte_staged_w(R, C));
    let grid = [w.div_ceil(geometry.0), h.div_ceil(geometry.1), planes];
    let window = |tile| window::<R, C, P>(a, (w, h, row_pitch, plane_len), geometry, tile);
    let slot = byte_slot_floats(R, C);
    // What a ghost cell that reads no element holds: a byte value (`byte_ghosts`).
    let ghost = if a.mode == layout::mode::code::CONSTANT {
        a.fill as u32
    } else {
        0
    };
    let ring = byte_ring(R, C, 1);
    // Tiles inside the image by one tensor copy each where the host filled the tile map
    // (`byte_tile_map`): thread 0 starts it, completing on the slot's barrier, and every
    // thread waits for the phase of its use (`phases`: one parity bit a slot).
    let tma = byte_tile_map(R, C) && a.tile_map != 0;
    let bars = shared_addr(shared_f32()) + 4 * byte_barriers_at(R, C);
    let phases = CopyPhases::default();
    if tma {
        // SAFETY: a barrier a slot, after the slots and the counter's words
        // (`byte_barriers_at`, `shared_floats`).
        unsafe { init_tile_barriers(bars, ring, tid) };
    }
    // Counted tiles come marked (`COPIED`) where one tensor copy stages them, worked out
    // once a tile (`counted_tiles`' `classify`: by thread 0 as it publishes it, by every
    // thread for the block's first rounds); walked tiles (one channel) are worked out
    // again from their window at each turn (a few uniform compares), rather than
    // remembered per slot (bookkeeping that cost more).
    let classify = #[inline(always)]
    |tile: [u32; 3]| {
        if tma && stage::by_bytes16(&window(tile)) {
            [tile[0] | COPIED, tile[1], tile[2]]
        } else {
            tile
        }
    };
    let copy = #[inline(always)]
    |win: &stage::Window<P>, z, slot, at| {
        let (boxed, at3) = (
            byte_box_bytes(byte_tile_box(R, C)),
            [win.gx0 / BYTE_ELEMENT, win.gy0, z],
        );
        // SAFETY: `a.tile_map`: the map describes the image in 2-byte elements with this
        // box (`byte_tile_box`; gx0 is a multiple of 16); the slot is 128-byte aligned and
        // holds the box; the barrier is the slot's, used by this copy alone until it lands.
        unsafe { start_tile_copy(tid, at, (bars, slot), boxed, at3) }
    };
    let stage = #[inline(always)]
    |tile: [u32; 3], slot, at| {
        if counted(R, C, 1) && tile[0] & COPIED != 0 {
            // Thread 0 alone starts the copy (`start_tile_copy` tests it too): the others
            // skip the window's arithmetic.
            if tid == 0 {
                copy(&window([tile[0] & !COPIED, tile[1], tile[2]]), tile[2], slot, at);
            }
            return;
        }
        let win = window(tile);
        if stage::by_bytes16(&win) {
            if tma {
                return copy(&win, tile[2], slot, at);
            }
            // SAFETY: by_bytes16; the slot holds the window's bytes.
            unsafe { stage::bytes16(&win, at, tid, THREADS) }
        } else if stage::aligned16(&win) {
            // SAFETY: aligned16; the slot holds the window's bytes.
            unsafe { stage::bytes16_inside(&win, at, tid, THREADS) }
        }
    };
    let land = #[inline(always)]
    |tile: &TileCursor, slot, at| {
        let tile = tile.current();
        if counted(R, C, 1) && tile[0] & COPIED != 0 {
            // SAFETY: the slot's barrier, initialized above; its copies land in order.
            unsafe { phases.wait(bars, slot) };
            return false; // every thread waited for the copy itself
        }
        let win = window(tile);
        if stage::by_bytes16(&win) {
            if tma {
                // SAFETY: the slot's barrier, initialized above; its copies land in order.
                unsafe { phases.wait(bars, slot) };
                return false; // every thread waited for the copy itself
            }
            // Copied whole: landed.
        } else if stage::aligned16(&win) {
            // SAFETY: the slot is this tile's, its inside groups landed (bytes16_inside).
            unsafe { stage::bytes16_edges(&win, at, ghost, tid, THREADS) }
        } else {
            // SAFETY: the kernel's contract covers the plane; the slot holds the
            // window's bytes and is this tile's.
            unsafe { stage::bytes_window::<P, { BYTE_WORDS as usize }>(&win, at, ghost, tid, THREADS) }
        }
        true
    };
    let compute = #[inline(always)]
    |[tx, ty, z]: [u32; 3], s| {
        let (x0, y0) = (
            if counted(R, C, 1) { tx & !COPIED } else { tx } * geometry.0,
            ty * geometry.1,
        );
        let out = p.wrapping_add(z as usize * plane_len);
        // SAFETY: the slot's bytes landed before the barrier.
        unsafe { compute_bytes::<R, C, P>(shared_addr(s), out, (w, h, row_pitch), (x0, y0)) }
    };
    if !counted(R, C, 1) {
        // One channel walks the tiles `gridDim.x` apart: the counter's taken index, live
        // across a tile, pushed `image_patches_c1_r1` past its 48 registers (28 bytes
        // spilled). Each row of tiles rotated by its row (`TileCursor::rotated`): the
        // blocks on the image's left and right columns would otherwise stage a border
        // tile in 4.
        let cursor = TileCursor::rotated(grid, block_x(), grid_dim_x());
        return walked_tiles(ring, grid[0] * grid[1] * grid[2], slot, cursor, stage, land, compute);
    }
    // With channels the tiles past each block's first are handed out by a counter
    // (`counted_tiles`): blocks that draw border tiles take fewer, and the last round
    // ends together.
    let words = shared_addr(shared_f32()) + 4 * counted_at(R, C, 1);
    let counter = a.tile_counter as *mut u32;
    // The taken indices split by dividers from r = 1 (at r = 0, 64 registers, their words
    // spilled a staged tile's coordinates: 12 bytes in `image_patches_c4_r0`).
    // SAFETY: `a.tile_counter` is the launch's zeroed counter (the kernel's contract); the
    // shared memory holds the ring and the counter's words (`shared_floats`).
    unsafe {
        counted_tiles(
            (ring, grid),
            (slot, words),
            (counter, tid, R > 0),
            classify,
            stage,
            land,
            compute,
        )
    }
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R, 1)` blocks per SM
/// (`baked_min_blocks(R, 1)` with the taps baked in).
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r, 1), baked_min_blocks($r, 1));
        /// `conv2d_fast` at a fixed radius.
        ///
        /// # Safety
        /// `a.input`, `a.output` hold `w·h·planes` floats (`a.extent`; planes are
        /// filtered one by one: a stack of images); `MASK_2D` holds the taps; launched
        /// as `layout::families::conv2d_fast` says.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract (rows w floats apart).
            unsafe { tiles::<$r, 1, f32>(&a, a.extent, a.extent[0]) }
        }
    )*};
}
entries!(
    conv2d_fast_r0 = 0,
    conv2d_fast_r1 = 1,
    conv2d_fast_r2 = 2,
    conv2d_fast_r3 = 3,
    conv2d_fast_r4 = 4,
    conv2d_fast_r5 = 5,
    conv2d_fast_r6 = 6,
    conv2d_fast_r7 = 7,
    conv2d_fast_r8 = 8,
);
