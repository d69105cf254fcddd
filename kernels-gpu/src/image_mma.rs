//! Pitched u8 images of 1 to 4 interleaved channels on the tensor cores: radius and
//! channel count compiled in (`image_mma_c{C}_r{R}`), every ghost-cell mode.
//!
//! The window is staged planar (one fp16 plane per channel). Mask row `dy` applied to a
//! row of one plane is a Toeplitz product: output pixel `x0 + n` (n < 8) reads pixels
//! `x0 - R + n + dx`, so with `A[m][k]` = plane row `y0 + m + dy - R`, pixel
//! `x0 - R + k` (16 rows, 16 pixels, as fp16: u8 is exact) and `B[k][n]` = tap
//! `(dy, dx)` where `k = n + dx`, else 0, one `mma.sync.m16n8k16` adds that mask row into
//! 16 × 8 outputs. Taps are split into an integer hi part and a lo part (the rest times
//! 2^11), both fp16, after scaling the mask so that its sum of |taps| is at most 2^15
//! (`layout::families::image_mma`): hi sums of u8 pixels are then exact integers in the
//! fp32 accumulators, lo sums are 2^11 times smaller, and `(hi + lo·2^-11)·2^-s` keeps
//! fp32 accuracy. The host builds that B table once per mask (`ConvArgs::mask` points at
//! it); each block copies it into shared memory while it stages its window.
//! Geometry: `layout::families::image_mma`.
use crate::device::*;
use crate::stage;
use layout::families::image_mma::{
    imma, imma_barriers_at, imma_counted_at, imma_out_at, imma_prefix_at, imma_prefix_side, imma_raw_w,
    imma_read_words, imma_rows, imma_slot_bytes, imma_table_bytes, imma_units, IMMA_KLEAD, IMMA_LEAD, IMMA_M,
    IMMA_MAX_RADIUS, IMMA_RING, IMMA_STAGE_WORDS, IMMA_UNIT_ROWS, LIMBS,
};
use layout::families::image_mma::{
    out_pitch, plane_bytes, pow2, raw_chunks, raw_pitch, table_buffer_bytes, table_bytes, table_offset, threads,
    tile_bytes, tile_h, units, warps, window_bytes, window_rows, BULK_FROM_RADIUS, GROUPS, LO_SHIFT, MAX_CHANNELS,
    MMA_M, STRIP_PX, TILE_PX, WINDOW_PITCH, WINDOW_QUADS, WINDOW_W,
};
use layout::mode::map_index;
use layout::tile_map::{byte_box_bytes, BYTE_ELEMENT};

/// `ldmatrix.sync.aligned.m8n8.x4.shared.b16`: four 8 × 8 fp16 matrices, lane `l`
/// giving the address of row `l % 8` of matrix `l / 8`; register `i` holds matrix `i`.
///
/// # Safety
/// Every lane of the warp runs it, each with a 16-byte aligned shared address of 16
/// readable bytes.
#[inline(always)]
unsafe fn ldmatrix_x4(addr: u32) -> [u32; 4] {
    let r: [u32; 4];
    // SAFETY: per the contract.
    unsafe {
        let (a, b, c, d): (u32, u32, u32, u32);
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg32) addr,
            options(readonly, nostack, preserves_flags)
        );
        r = [a, b, c, d];
    }
    r
}

/// `ldmatrix.sync.aligned.m8n8.x2.shared.b16`: two 8 × 8 fp16 matrices, lanes 0..16
/// giving the addresses of their rows (lane `l`: row `l % 8` of matrix `l / 8`).
///
/// # Safety
/// Every lane of the warp runs it; lanes 0..16 each with a 16-byte aligned shared
/// address of 16 readable bytes.
#[inline(always)]
unsafe fn ldmatrix_x2(addr: u32) -> [u32; 2] {
    let (a, b): (u32, u32);
    // SAFETY: per the contract.
    unsafe {
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{{a}, {b}}}, [{p}];",
            a = out(reg32) a, b = out(reg32) b, p = in(reg32) addr,
            options(readonly, nostack, preserves_flags)
        );
    }
    [a, b]
}

/// A warp's `mma.sync` of a 16 × 8 block, `d = a·b + c` (`a` 16 × k, `b` k × 8, in the
/// PTX fragment layouts: four A registers, two B, four C and D), one function per shape
/// and types.
macro_rules! warp_mma {
    ($(#[$doc:meta])* $name:ident, $acc:ty, $ptx:literal) => {
        $(#[$doc])*
        #[inline(always)]
        fn $name(a: [u32; 4], b0: u32, b1: u32, c: [$acc; 4]) -> [$acc; 4] {
            let (d0, d1, d2, d3): ($acc, $acc, $acc, $acc);
            // SAFETY: registers only; every lane of the warp runs it (callers keep it out
            // of divergent code: the loops around it are uniform).
            unsafe {
                core::arch::asm!(
                    concat!($ptx, " {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"),
                    d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                    a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                    b0 = in(reg32) b0, b1 = in(reg32) b1,
                    c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            [d0, d1, d2, d3]
        }
    };
}

warp_mma!(
    /// fp32 sums of fp16 inputs, k = 16 (the planar path).
    mma,
    f32,
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
);
warp_mma!(
    /// s32 sums of s8 A (taps) and u8 B (pixels), k = 32 (the integer path).
    imma_mma,
    u32,
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32"
);

/// fp16 bits of `v`, rounded to nearest (`cvt.rn.f16.f32`).
#[inline(always)]
fn f16_bits(v: f32) -> u32 {
    let h: u16;
    // SAFETY: a conversion between registers.
    unsafe {
        core::arch::asm!("cvt.rn.f16.f32 {h}, {v};", h = out(reg16) h, v = in(reg32) v,
            options(pure, nomem, nostack, preserves_flags));
    }
    h as u32
}

/// The bytes `b0` and `b1` (indices into the words `a`, `b1 - b0 <= 4`) as an fp16 pair:
/// each byte `b` becomes the fp16 `1024 + b` by its bit pattern (`0x64` above it), less
/// 1024 (exact). Where both bytes lie in one word, one `prmt` with `0x64` bytes as its
/// second word builds the pattern; else a `prmt` of the two words and a mask.
#[inline(always)]
fn pair(a: &[u32; MAX_CHANNELS as usize + 1], b0: u32, b1: u32) -> u32 {
    const MAGIC: u32 = 0x6400_6400;
    let j = (b0 / 4) as usize;
    let p = if b1 / 4 == b0 / 4 {
        prmt(a[j], 0x6464_6464, (b0 % 4) | 4 << 4 | (b1 % 4) << 8 | 4 << 12)
    } else {
        prmt(a[j], a[j + 1], (b0 % 4) | (b1 - 4 * (b0 / 4)) << 8) & 0x00ff_00ff | MAGIC
    };
    let d: u32;
    // SAFETY: registers only.
    unsafe {
        core::arch::asm!("sub.f16x2 {d}, {p}, {m};", d = out(reg32) d, p = in(reg32) p, m = in(reg32) MAGIC,
            options(pure, nomem, nostack, preserves_flags));
    }
    d
}

/// Deinterleaves a quad (4 pixels, `4C` bytes from byte `sh` of the words `w`) into the
/// window: channel `ch`'s 4 cells as one 8-byte word of plane `ch` at `dst + ch·plane`.
///
/// # Safety
/// `dst + ch·plane` is an 8-byte aligned shared address of 8 writable bytes, each `ch < C`.
#[inline(always)]
unsafe fn put_quad<const C: u32>(w: &[u32; MAX_CHANNELS as usize + 1], sh: u32, dst: u32, plane: u32) {
    // The quad's bytes from word 0 on.
    let mut a = [0u32; MAX_CHANNELS as usize + 1];
    for i in 0..C as usize {
        a[i] = prmt(w[i], w[i + 1], 0x3210 + 0x1111 * sh);
    }
    for ch in 0..C {
        let lo = pair(&a, ch, C + ch);
        let hi = pair(&a, 2 * C + ch, 3 * C + ch);
        // SAFETY: per the contract.
        unsafe { store_shared_u32x2(dst + ch * plane, lo, hi) };
    }
}

/// Window quad `(sy, q)` of a tile at a border, cell by cell: each of its 4 pixels (from
/// `gpx`, wrapping) of plane row `row` (`-1`: the fill value) mapped by the mode, every
/// channel. Out of line: border tiles only.
///
/// # Safety
/// The image holds `h` rows of `w` pixels of `C` bytes `pitch` apart from `n`;
/// `dst + ch·plane` is an 8-byte aligned shared address of 8 writable bytes, each `ch < C`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // scalars: a struct would go through local memory
unsafe fn border_quad<const C: u32>(
    n: *const u8,
    pitch: u32,
    w: u32,
    mode: u32,
    fill_h: u32,
    row: i32,
    gpx: u32,
    dst: u32,
    plane: u32,
) {
    let mut col = [u32::MAX; 4];
    for (k, v) in col.iter_mut().enumerate() {
        let x = gpx.wrapping_add(k as u32);
        if row >= 0 {
            let m = if x < w {
                x as i32
            } else {
                map_index(mode, x as i32, w as i32)
            };
            if m >= 0 {
                *v = m as u32 * C;
            }
        }
    }
    for ch in 0..C {
        let mut h = [fill_h; 4];
        for (v, &c) in h.iter_mut().zip(col.iter()) {
            if c != u32::MAX {
                // SAFETY: row and pixel lie inside the image (mapped into it).
                *v = f16_bits(unsafe {
                    <u8 as Pixel>::load(n.wrapping_add(row as usize * pitch as usize + (c + ch) as usize))
                });
            }
        }
        // SAFETY: per the contract.
        unsafe { store_shared_u32x2(dst + ch * plane, h[0] | h[1] << 16, h[2] | h[3] << 16) }
    }
}

/// Writes the output tile at byte `x0` of row `y0` from the shared output tile: 16 bytes
/// a thread where the tile is whole and its rows 16-byte aligned (a load, a store), else
/// a word at a time where its rows allow, else byte by byte.
///
/// # Safety
/// `p` holds `h` rows `pitch` bytes apart of `wc` bytes; `out` holds the tile's bytes.
#[inline(always)]
unsafe fn write_out<const R: u32, const C: u32>(p: *mut u8, wc: u32, h: u32, pitch: u32, x0: u32, y0: u32, out: u32) {
    let (tid, tw, op) = (thread_x(), tile_bytes(C), out_pitch(C));
    let base = p.wrapping_add(y0 as usize * pitch as usize + x0 as usize);
    if x0 + tw <= wc && y0 + tile_h(R, C) <= h && pitch.is_multiple_of(16) && (base as usize).is_multiple_of(16) {
        let per_row = tw / 16;
        for k in 0..tile_h(R, C) * per_row / threads(R, C) {
            let idx = tid + k * threads(R, C);
            let (oy, q) = (idx / per_row, idx % per_row);
            // SAFETY: 16 bytes of the output tile (its pitch a multiple of 16) and of
            // the image's row, aligned.
            unsafe {
                let v = load_shared_u32x4(out + oy * op + 16 * q);
                store_global_u32x4(base.wrapping_add(oy as usize * pitch as usize + 16 * q as usize), v);
            }
        }
        return;
    }
    let per_row = tw / 4;
    let mut idx = tid;
    while idx < tile_h(R, C) * per_row {
        let (oy, q) = (idx / per_row, idx % per_row);
        let (y, x) = (y0 + oy, x0 + 4 * q);
        if y < h && x < wc {
            // SAFETY: a word of the output tile.
            let v = unsafe { load_shared_u32(out + oy * op + 4 * q) };
            let dst = p.wrapping_add(y as usize * pitch as usize + x as usize);
            if x + 4 <= wc && (dst as usize).is_multiple_of(4) {
                // SAFETY: 4 bytes of the row, aligned.
                unsafe { store_global_u32(dst, v) };
            } else {
                for k in 0..4 {
                    if x + k < wc {
                        // SAFETY: a byte of the row.
                        unsafe { store_global_u8(dst.wrapping_add(k as usize), v >> (8 * k)) };
                    }
                }
            }
        }
        idx += threads(R, C);
    }
}

/// Copies the host's table buffer (`table_buffer_bytes(R)`: the B table, then 2^-s) into
/// the shared `table` with 16-byte `cp.async`s, and commits them (the caller waits).
///
/// # Safety
/// `src` holds the table buffer of this radius, 16-byte aligned; `table` holds
/// `table_buffer_bytes(R)` shared bytes, 16-byte aligned, no thread touches before the
/// wait and a barrier.
#[inline(always)]
unsafe fn copy_table<const R: u32, const C: u32>(src: *const f32, table: u32) {
    let mut e = thread_x();
    while e < table_buffer_bytes(R) / 16 {
        // SAFETY: 16 bytes of the buffer and of the shared table, both aligned.
        unsafe { cp_async_f4(table + 16 * e, src.wrapping_add(4 * e as usize), 16) };
        e += threads(R, C);
    }
    cp_async_commit();
}

/// Stages the window of the tile at pixel `(x0, y0)` as fp16 planes: cell `(ch, sy, col)`
/// is input row `y0 - R + sy`, pixel `x0 - R + col`, channel `ch`, each mapped by the
/// mode outside the image. From `BULK_FROM_RADIUS` on, interior tiles copy their input
/// rows' bytes with 16-byte `cp.async`s into `raw`, every copy in flight at once (the
/// word loads' batches waited out the memory latency once per batch), then deinterleave
/// them; below it, and in tiles near the border, the window goes quad by quad from
/// global memory (`stage_quads`).
///
/// # Safety
/// As `filter`; `win` holds `window_bytes(R, C)` shared bytes and `raw` `raw_bytes(R, C)`,
/// which no thread reads until the next barrier (the caller's: the window is complete
/// only after it, and the output tile over `raw` is written only after it). Every
/// thread of the block calls it (it may wait at barriers).
#[inline(always)]
unsafe fn stage<const R: u32, const C: u32>(a: &ConvArgs, x0: u32, y0: u32, win: u32, raw: u32) {
    let (wc, h) = (a.extent[0] * C, a.extent[1]);
    let gx0 = (x0 * C).wrapping_sub(R * C);
    // SAFETY: forwarded; the bulk test is `stage_raw`'s contract, the quad test
    // `stage_quads`' own, per quad. The branch is the block's (x0, y0 are), so every
    // thread meets the barriers.
    unsafe {
        if R >= BULK_FROM_RADIUS {
            if y0 >= R && y0 + tile_h(R, C) + R <= h && x0 * C >= R * C + 15 && gx0 + raw_pitch(C) <= wc {
                // No barrier after the widening: the caller's, before the sums, comes
                // before anything writes the output tile over raw.
                stage_raw::<R, C>(a, y0, gx0, raw);
                sync_threads(); // every copy landed, of every thread
                widen_raw::<R, C>(a, y0, gx0, win, raw);
            } else {
                stage_quads::<R, C, true>(a, x0, y0, win)
            }
        } else if y0 >= R && y0 + tile_h(R, C) + R <= h && x0 >= R + 3 && gx0 + C * WINDOW_W + 4 <= wc {
            stage_quads::<R, C, false>(a, x0, y0, win)
        } else {
            stage_quads::<R, C, true>(a, x0, y0, win)
        }
    }
}

/// Copies the `window_rows(R, C)` input rows of an interior tile's window, from the 16-byte
/// aligned chunk holding byte `gx0` on, `raw_chunks(C)` chunks a row, into `raw` (rows
/// `raw_pitch` apart), and waits for this thread's copies.
///
/// # Safety
/// Rows `y0 - R .. y0 + tile_h(R, C) + R` are inside the image and `15 <= gx0`,
/// `gx0 + raw_pitch(C) <= w·C`: every chunk lies inside its row's bytes.
#[inline(always)]
unsafe fn stage_raw<const R: u32, const C: u32>(a: &ConvArgs, y0: u32, gx0: u32, raw: u32) {
    let n = a.input as *const u8;
    let (chunks, rows) = (raw_chunks(C), window_rows(R, C));
    let mut idx = thread_x();
    while idx < rows * chunks {
        let (sy, i) = (idx / chunks, idx % chunks);
        let start = n.wrapping_add((y0 - R + sy) as usize * a.pitch as usize + gx0 as usize);
        let chunk = start.wrapping_sub(start as usize & 15).wrapping_add(16 * i as usize);
        // SAFETY: 16 aligned bytes of the row (the contract: at most 15 before byte
        // gx0, and raw_pitch from the aligned start ends by gx0 + raw_pitch <= w·C);
        // raw row sy, chunk i, 16-byte aligned inside raw.
        unsafe { cp_async_f4(raw + sy * raw_pitch(C) + 16 * i, chunk as *const f32, 16) };
        idx += threads(R, C);
    }
    cp_async_commit();
    cp_async_wait::<0>();
}

/// Deinterleaves an interior tile's raw window (`stage_raw`, landed) into the planes, a
/// quad at a time: the `C + 1` raw words around its `4C` bytes.
///
/// # Safety
/// `raw` holds the landed copies of `stage_raw(a, y0, gx0, raw)` (after a barrier); `win`
/// holds `window_bytes(R, C)` shared bytes no other thread reads until the next barrier.
#[inline(always)]
unsafe fn widen_raw<const R: u32, const C: u32>(a: &ConvArgs, y0: u32, gx0: u32, win: u32, raw: u32) {
    let n = a.input as *const u8;
    let (wp, quads, rows) = (WINDOW_PITCH, WINDOW_QUADS, window_rows(R, C));
    let mut idx = thread_x();
    while idx < rows * quads {
        let (sy, q) = (idx / quads, idx % quads);
        // Where the row's window starts in its first chunk, then this quad's bytes.
        let lead = (n as u32)
            .wrapping_add((y0 - R + sy).wrapping_mul(a.pitch))
            .wrapping_add(gx0)
            & 15;
        let o = lead + 4 * C * q;
        let at = raw + sy * raw_pitch(C) + (o & !3);
        let word = |i: u32| {
            if i <= C {
                // SAFETY: inside raw row sy: o + 4C + 4 <= 15 + 4C·quads + 4 <= raw_pitch
                // (raw_chunks); landed, after the caller's barrier.
                unsafe { load_shared_u32(at + 4 * i) }
            } else {
                0
            }
        };
        let w = [word(0), word(1), word(2), word(3), word(4)];
        // SAFETY: plane cells (sy, 4q..4q + 4), 8-byte aligned, inside each plane.
        unsafe { put_quad::<C>(&w, o & 3, win + 2 * (sy * wp + 4 * q), plane_bytes(R, C)) };
        idx += threads(R, C);
    }
}

/// Input words a thread's batch in `stage_quads` loads before it widens them (`C + 1` a
/// quad; border tiles half).
const BATCH_WORDS: u32 = 12;
/// Most quads a thread's batch in `stage_quads` holds (at one channel).
const MAX_BATCH: u32 = 8;

/// `$body` once per batch slot `$i` = 0..MAX_BATCH, written out (the slots' bodies test
/// `$i` against the batch).
macro_rules! batch_slots {
    ($i:ident => $body:block) => {
        batch_slots!(@ $i $body; 0 1 2 3 4 5 6 7)
    };
    (@ $i:ident $body:block; $($n:literal)*) => {
        $({
            let $i: u32 = $n;
            $body
        })*
    };
}
const _: () = assert!(BATCH_WORDS / 2 <= MAX_BATCH);

/// The window's quads, 4 pixels of every channel each: the `C + 1` aligned input words
/// around each quad's `4C` bytes, a batch of quads' loads first so that their latencies
/// overlap. The batches unrolled at r <= 1 in interior tiles, rolled above (unrolled,
/// ptxas spilled at r = 3 at 80 registers). In tiles at a border (`EDGE`), each quad's
/// row is mapped by the mode, and only the quads whose aligned reads would leave the
/// row, or whose row is the fill, go cell by cell (`border_quad`).
///
/// # Safety
/// As `stage`; without `EDGE`, every quad's aligned reads lie inside its row (the
/// interior test of `stage`).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexed: as iterators, LLVM kept the batch in local memory
unsafe fn stage_quads<const R: u32, const C: u32, const EDGE: bool>(a: &ConvArgs, x0: u32, y0: u32, win: u32) {
    let n = a.input as *const u8;
    let (w, h, pitch, tid) = (a.extent[0], a.extent[1], a.pitch, thread_x());
    let (wc, wp, wr, quads, plane) = (w * C, WINDOW_PITCH, window_rows(R, C), WINDOW_QUADS, plane_bytes(R, C));
    let gx0 = (x0 * C).wrapping_sub(R * C);
    let fill_h = if EDGE && a.mode == layout::mode::code::CONSTANT {
        f16_bits(a.fill)
    } else {
        0
    };
    // Window quad idx: whether it goes the fast way, its row (mapped; u32::MAX: the
    // fill), its first byte, its plane-0 cell.
    let at = |idx: u32| {
        let (sy, q) = (idx / quads, idx % quads);
        let gy = (y0 + sy).wrapping_sub(R);
        let row = if !EDGE || gy < h {
            gy
        } else {
            map_index(a.mode, gy as i32, h as i32) as u32
        };
        let gx = gx0.wrapping_add(4 * C * q);
        // The aligned words around bytes gx..gx + 4C lie in 3 bytes before gx and 4
        // after gx + 4C (gx "negative" wraps above wc).
        let fast = !EDGE || (row < h && gx >= 3 && gx < wc && wc - gx >= 4 * C + 4);
        (fast, row, gx, win + 2 * (sy * wp + 4 * q))
    };
    let batch = ((BATCH_WORDS / (C + 1)) / if EDGE { 2 } else { 1 }).max(1);
    let per = (wr * quads).div_ceil(threads(R, C));
    for first in (0..if R <= 1 && !EDGE { per } else { opaque(per) }).step_by(batch as usize) {
        let mut ws = [[0u32; MAX_CHANNELS as usize + 1]; MAX_BATCH as usize];
        let quad = |i: u32| {
            let (fast, row, gx, dst) = at(tid + (first + i) * threads(R, C));
            (
                i < batch && tid + (first + i) * threads(R, C) < wr * quads && first + i < per,
                fast,
                row,
                gx,
                dst,
            )
        };
        // Written out per batch slot (`batch_slots!`): as loops, LLVM kept `ws` in local
        // memory.
        batch_slots!(i => {
            let (live, fast, row, gx, _) = quad(i);
            if live && fast {
                let addr = n.wrapping_add(row as usize * pitch as usize + gx as usize);
                let al = addr.wrapping_sub(addr as usize & 3);
                for k in 0..C as usize + 1 {
                    // SAFETY: the aligned words lie inside the row's bytes (the interior
                    // test, or `fast`), the row inside the image (mapped).
                    ws[i as usize][k] = unsafe { load_global_nc_u32(al.wrapping_add(4 * k)) };
                }
            }
        });
        batch_slots!(i => {
            let (live, fast, row, gx, dst) = quad(i);
            if live && fast {
                let sh = n.wrapping_add(row as usize * pitch as usize + gx as usize) as u32 & 3;
                // SAFETY: plane cells (sy, 4q..4q + 4), 8-byte aligned, inside each plane.
                unsafe { put_quad::<C>(&ws[i as usize], sh, dst, plane) };
            }
        });
    }
    if EDGE {
        // The other quads, after the batches: nothing of theirs is live across the call.
        let mut idx = tid;
        while idx < wr * quads {
            let (fast, row, _, dst) = at(idx);
            if !fast {
                let gpx = x0.wrapping_sub(R).wrapping_add(4 * (idx % quads));
                // SAFETY: the row is mapped into the image (or -1), the pixels by the
                // mode; plane cells (sy, 4q..4q + 4) are inside each plane.
                unsafe { border_quad::<C>(n, pitch, w, a.mode, fill_h, row as i32, gpx, dst, plane) };
            }
            idx += threads(R, C);
        }
    }
}

/// The warps sum the tile's units (channel, 32-pixel strip, 16 rows), every warp as
/// many, into the shared output tile as saturated bytes (scaled back by the table's
/// `2^-s`).
///
/// # Safety
/// `win` holds the staged window and `table` the table buffer (after a barrier); `out`
/// holds `out_bytes(R, C)` shared bytes no other thread touches until the next barrier.
#[inline(always)]
unsafe fn sum_tile<const R: u32, const C: u32>(win: u32, table: u32, out: u32) {
    let (taps, wp, op) = (2 * R + 1, WINDOW_PITCH, out_pitch(C));
    let (lane, warp) = (thread_x() % 32, thread_x() / 32);
    let strips = TILE_PX / STRIP_PX;
    // Rolled: unrolled, ptxas overlapped the units and spilled.
    for it in 0..opaque(units(R, C) / warps(R, C)) {
        let u = warp + warps(R, C) * it;
        let (mb, s, ch) = (
            u % (tile_h(R, C) / MMA_M),
            (u / (tile_h(R, C) / MMA_M)) % strips,
            u / (tile_h(R, C) / MMA_M) / strips,
        );
        let mut acc_hi = [[0.0f32; 4]; GROUPS as usize];
        let mut acc_lo = [[0.0f32; 4]; GROUPS as usize];
        // Lane l gives row l % 16 of 8 pixels from 8(l / 16): ldmatrix's 4 matrices.
        let a_lane =
            win + ch * plane_bytes(R, C) + 2 * ((mb * MMA_M + lane % 16) * wp + s * STRIP_PX + 8 * (lane / 16));
        for dy in 0..taps {
            // The unit's 5 8-pixel blocks of these 16 rows, each loaded once: m[2j],
            // m[2j + 1] are block j's rows 0..8 and 8..16; group grp's A is blocks grp
            // and grp + 1.
            let row = a_lane + 2 * dy * wp;
            // SAFETY: this lane's entry of the table.
            let b = unsafe { load_shared_u32x4(table + 16 * (dy * 32 + lane)) };
            // SAFETY: rows mb·16 + dy + 0..16 < wr, blocks 0..5 inside the plane's width
            // (layout's assertion); 16-byte aligned (wp, offsets multiples of 8).
            let (x0, x1, x2) = unsafe { (ldmatrix_x4(row), ldmatrix_x4(row + 32), ldmatrix_x2(row + 64)) };
            let m = [x0[0], x0[1], x0[2], x0[3], x1[0], x1[1], x1[2], x1[3], x2[0], x2[1]];
            for (grp, (hi, lo)) in acc_hi.iter_mut().zip(acc_lo.iter_mut()).enumerate() {
                let x = [m[2 * grp], m[2 * grp + 1], m[2 * grp + 2], m[2 * grp + 3]];
                *hi = mma(x, b[0], b[1], *hi);
                *lo = mma(x, b[2], b[3], *lo);
            }
        }
        // Outputs (g, 2t..2t+1) and (g + 8, 2t..2t+1) of each group, as bytes of channel
        // ch in the interleaved output tile.
        let (g, t) = (lane / 4, lane % 4);
        // The taps' scale back, read here: kept across the sums, it cost registers
        // (ptxas spilled 4-8 bytes at one and two channels, r = 2, 3).
        // SAFETY: the word after the B table in the shared copy.
        let down = f32::from_bits(unsafe { load_shared_u32(table + table_bytes(R)) });
        for (grp, (hi, lo)) in acc_hi.iter().zip(acc_lo.iter()).enumerate() {
            let v = |i: usize| u8_sat(fma(lo[i], pow2(-LO_SHIFT), hi[i]) * down);
            let col = (s * STRIP_PX + 8 * grp as u32 + 2 * t) * C + ch;
            let at = out + (mb * MMA_M + g) * op + col;
            // SAFETY: inside the output tile (2-byte aligned where C = 1).
            unsafe {
                if C == 1 {
                    store_shared_u16(at, prmt(v(0), v(1), 0x0040));
                    store_shared_u16(at + 8 * op, prmt(v(2), v(3), 0x0040));
                } else {
                    store_shared_u8(at, v(0));
                    store_shared_u8(at + C, v(1));
                    store_shared_u8(at + 8 * op, v(2));
                    store_shared_u8(at + 8 * op + C, v(3));
                }
            }
        }
    }
}

/// # Safety
/// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·C` u8 pixels;
/// `a.mask` holds the host's table buffer for radius `R` (`table_buffer_bytes(R)`
/// bytes, 16-byte aligned); under the constant mode `a.fill` is an integer of magnitude
/// at most 255; launched as `layout::families::image_mma` says for `C` channels.
#[inline(always)]
unsafe fn filter<const R: u32, const C: u32>(a: &ConvArgs) {
    let (w, h) = (a.extent[0], a.extent[1]);
    // One tile per block, the block scheduler balancing the launch: persistent blocks
    // looping over the tiles left SMs idle (ncu, image_mma_c3_r1: the busiest SM active
    // 772 k cycles, the least 398 k, of 797 k) and ran r = 1 at 452 us against 272.
    // Of block b, the row of tiles `w` pixels wide (never 0 tiles: no division-by-zero
    // panic path); the origin in pixels.
    let origin = |b: u32, w: u32| {
        let tiles_x = w.div_ceil(TILE_PX).max(1);
        ((b % tiles_x) * TILE_PX, (b / tiles_x) * tile_h(R, C))
    };
    let (x0, y0) = origin(block_x(), w);
    if y0 >= h {
        return; // past the last tile (the whole block: no barrier is left waiting)
    }
    let win = shared_addr(shared_f32());
    // SAFETY: forwarded from the contract; the window, the raw window (where the output
    // tile goes), the output tile and the table are the block's shared memory as layout
    // places them, each touched between the barriers below as the callees ask. The
    // table's copy is in flight while the window is staged (its own bytes), and landed
    // at the wait before the barrier that precedes the sums.
    unsafe {
        copy_table::<R, C>(a.mask as *const f32, win + table_offset(R, C));
        stage::<R, C>(a, x0, y0, win, win + window_bytes(R, C));
        cp_async_wait::<0>();
        sync_threads();
        // The output tile's and the table's addresses from the window's where each is
        // used: kept as values of their own, one was spilled (ptxas, r = 1, 64
        // registers).
        let table = win + table_offset(R, C);
        sum_tile::<R, C>(win, table, win + window_bytes(R, C));
        sync_threads();
        // The origin again, from an opaque copy of the block index: kept from the
        // start, it was spilled across the sums (ptxas, 64 registers).
        let (x0, y0) = origin(opaque(block_x()), opaque(w));
        let out = shared_addr(shared_f32()) + opaque(window_bytes(R, C));
        write_out::<R, C>(a.output as *mut u8, w * C, h, a.pitch, x0 * C, y0, out);
    }
}
/// The integer path (`layout::families::image_mma::imma`, r = 1, 2): persistent blocks
/// take tiles from the counter (`counted_tiles`) into a ring of staged windows, the
/// interleaved bytes as they are (one tensor copy a tile where the map covers it, else
/// staged by threads with the mode's ghost cells), and sum each tile's units from them.
///
/// # Safety
/// As `filter`; `a.mask` holds the integer path's table buffer for `R` and `C`
/// (`imma_table_buffer_bytes(R)` bytes, 16-byte aligned); `a.tile_counter` is the
/// launch's zeroed counter; `a.tile_map` set only with a map of the image's bytes in
/// 2-byte elements with the box `imma_box(R, C)`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexed: the fragments stay in registers
unsafe fn filter_imma<const R: u32, const C: u32>(a: &ConvArgs) {
    let (w, h, tid) = (a.extent[0], a.extent[1], thread_x());
    let (wc, tb, th) = (w * C, tile_bytes(C), tile_h(R, C));
    let (raw_w, rows) = (imma_raw_w(C), imma_rows(R, C));
    let lane = tid % 32;
    // This lane's A fragments, every mask row and limb: held for the launch.
    let tab = a.mask as *const u8;
    let mut frag = [[[0u32; 4]; LIMBS as usize]; 2 * IMMA_MAX_RADIUS as usize + 1];
    for dy in 0..2 * R as usize + 1 {
        for limb in 0..LIMBS as usize {
            for q in 0..4 {
                let e = ((dy as u32 * LIMBS + limb as u32) * 32 + lane) * 16 + 4 * q;
                // SAFETY: inside the table (the contract), 4-byte aligned.
                frag[dy][limb][q as usize] = unsafe { load_global_nc_u32(tab.wrapping_add(e as usize)) };
            }
        }
    }
    let table_end = tab.wrapping_add(imma_table_bytes(R) as usize);
    // SAFETY: the scale words after the table.
    let (down, up16) = unsafe {
        (
            f32::from_bits(load_global_nc_u32(table_end)),
            f32::from_bits(load_global_nc_u32(table_end.wrapping_add(4))),
        )
    };
    let base = shared_addr(shared_f32());
    let (out, bars) = (base + imma_out_at(R, C), base + imma_barriers_at(R, C));
    let grid = [wc.div_ceil(tb), h.div_ceil(th), 1];
    // A constant fill a byte holds (an integer from 0 to 255) is staged in the ghost
    // cells; any other is staged as 0, as the tensor copy lands them, and each output of
    // a border unit adds `fill × (its taps on ghost cells)` (`GhostFill`; 4% slower than
    // a staged fill, H200, u8 8192² × 3, r = 2).
    let constant = a.mode == layout::mode::code::CONSTANT;
    let byte_fill = constant && a.fill >= 0.0 && a.fill <= 255.0 && (a.fill as u32) as f32 == a.fill;
    let fill_term = constant && !byte_fill;
    let ghost = if byte_fill { a.fill as u32 } else { 0 };
    let window = |[tx, ty, _]: [u32; 3]| stage::Window::<u8> {
        plane: a.input as *const u8,
        row_pitch: a.pitch,
        w: wc,
        h,
        channels: C,
        gx0: (tx * tb).wrapping_sub(IMMA_LEAD),
        gy0: (ty * th).wrapping_sub(R),
        sw: raw_w,
        sh: rows,
        mode: a.mode,
        fill: a.fill,
        ghost: false,
        unread: 0,
        inline_border: false,
    };
    // Every tile by tensor copy where the host made the map. It reads cells past the
    // image as zeros, and across the right edge of rows of an odd byte count a byte of
    // the pitch's padding: a tile that is neither inside the image nor under ghost cells
    // staged as 0 with no such byte has its ghost words rewritten once it lands
    // (`ghost_words`). Without a map, tiles stage by threads.
    let zero = layout::mode::zero_ghosts(a.mode, ghost as f32);
    let tma = a.tile_map != 0;
    // The byte of its row just past a tile's staged window.
    let right = |tile: [u32; 3]| (tile[0] * tb).wrapping_sub(IMMA_LEAD).wrapping_add(raw_w);
    let inside = |tile: [u32; 3]| {
        let gy0 = (tile[1] * th).wrapping_sub(R);
        tile[0] > 0 && right(tile) <= wc && tile[1] * th >= R && gy0 + rows <= h
    };
    let clean = |tile: [u32; 3]| inside(tile) || (zero && (wc.is_multiple_of(2) || right(tile) < wc));
    let phases = CopyPhases::default();
    if tma {
        // SAFETY: a barrier a slot, after the output tile (`imma_barriers_at`).
        unsafe { init_tile_barriers(bars, IMMA_RING, tid) };
    }
    let stage = #[inline(always)]
    |tile: [u32; 3], slot, at| {
        if tma {
            let win = window(tile);
            // SAFETY: `a.tile_map` maps the image's bytes in 2-byte elements with this box
            // (gx0 a multiple of 16: tiles are 64·C bytes, the lead 16); the slot is
            // 128-byte aligned and holds the box; the barrier is the slot's, used by this
            // copy alone until it lands.
            unsafe {
                start_tile_copy(
                    tid,
                    at,
                    (bars, slot),
                    byte_box_bytes(layout::families::image_mma::imma_box(R, C)),
                    [((win.gx0 as i32) / BYTE_ELEMENT as i32) as u32, win.gy0, 0],
                )
            }
        }
    };
    let land = #[inline(always)]
    |tile: &TileCursor, slot, at| {
        let t = tile.current();
        if tma {
            // SAFETY: the slot's barrier, initialized above; its copies land in order.
            unsafe { phases.wait(bars, slot) };
            if clean(t) {
                return false;
            }
            // SAFETY: the slot holds this tile's landed window; the image is the
            // contract's, mapped (so its first byte and pitch are 16-byte aligned); gx0 is
            // a multiple of 16 (as for the copy); the read words lie inside a row.
            unsafe { ghost_words::<C>(&window(t), at, imma_read_words(C), ghost, (tid, threads(R, C))) };
            return true;
        }
        // SAFETY: the kernel's contract covers the image; the slot holds the window's
        // bytes (`imma_slot_bytes`), and is this tile's.
        unsafe { stage::bytes_window::<u8, { IMMA_STAGE_WORDS as usize }>(&window(t), at, ghost, tid, threads(R, C)) };
        true
    };
    let compute = #[inline(always)]
    |[tx, ty, _]: [u32; 3], s: *const f32| {
        let at = shared_addr(s);
        // SAFETY: the slot's window landed (the barrier or the copy's wait); the output
        // tile is the block's, free since the barrier that ended the last tile.
        unsafe {
            let fill = GhostFill {
                fill: a.fill,
                prefix: tab.wrapping_add(imma_prefix_at(R) as usize),
                origin: (tx * tb, ty * th),
                extent: (w, h),
            };
            // Two copies of the loop: a branch in every output's epilogue kept the next
            // unit's loads and MMAs from overlapping it.
            if fill_term && !inside([tx, ty, 0]) {
                sum_tile_imma::<R, C, true>(at, &frag, (down, up16), &fill, out);
            } else {
                sum_tile_imma::<R, C, false>(at, &frag, (down, up16), &fill, out);
            }
            sync_threads();
            write_out::<R, C>(a.output as *mut u8, wc, h, a.pitch, tx * tb, ty * th, out);
        }
    };
    let words = base + imma_counted_at(R, C);
    let counter = a.tile_counter as *mut u32;
    // SAFETY: `a.tile_counter` is the launch's zeroed counter; the shared memory holds the
    // ring from its base, and the counter's words (`imma_shared_bytes`).
    unsafe {
        counted_tiles(
            (IMMA_RING, grid),
            (imma_slot_bytes(R, C) / 4, words),
            (counter, tid, true),
            |c| c,
            stage,
            land,
            compute,
        )
    }
}

/// Rewrites the words of a landed window (`win`, staged at `raw`, rows `sw` bytes apart)
/// that the units read (`words`, of each row: `imma_read_words`) and that hold a ghost
/// cell or a byte past the right edge: each of their cells the element the mode maps it
/// to, or `ghost`. Only those words are walked, a word a thread (the rows above and below
/// the image whole, the words at the left and right edges of the others), so that a
/// warp's lanes map cells together rather than one lane at a time; a word whose row maps
/// into the image and whose columns lie inside it is one word load. Done when it returns
/// (the caller's barrier publishes it).
///
/// # Safety
/// `win.plane` holds the image (`C` interleaved channels), 4-byte aligned, as are
/// `win.row_pitch` and `win.gx0`; `raw` holds the window's `sw·sh` bytes, landed, which
/// no other thread reads until the next barrier; `words` lie inside a row.
#[inline(always)]
unsafe fn ghost_words<const C: u32>(
    win: &stage::Window<u8>,
    raw: u32,
    (q0, q1): (u32, u32),
    ghost: u32,
    (tid, threads): (u32, u32),
) {
    // Image sizes are below 2^31 (the host's checks), so these fit i32.
    let (gx, gy, w, h, sh) = (
        win.gx0 as i32,
        win.gy0 as i32,
        win.w as i32,
        win.h as i32,
        win.sh as i32,
    );
    // Rows in0..in1 of the window lie inside the image, the others above or below it.
    let in0 = (-gy).clamp(0, sh);
    let in1 = (h - gy).clamp(in0, sh);
    let (rows_in, rows_out) = ((in1 - in0) as u32, (sh - (in1 - in0)) as u32);
    // Of the read words q0..q1: q0..l1 start before column 0, r0..q1 end past the last.
    let l1 = (if gx < 0 { (3 - gx) as u32 / 4 } else { 0 }).clamp(q0, q1);
    let r0 = ((w - gx).max(0) as u32 / 4).clamp(l1, q1);
    let (nq, left) = (q1 - q0, l1 - q0);
    let side = left + (q1 - r0);
    let total = rows_out * nq + rows_in * side;
    let mut g = tid;
    while g < total {
        let (sy, q) = if g < rows_out * nq {
            let k = (g / nq.max(1)) as i32; // never 0: no division-by-zero panic path
            (if k < in0 { k } else { in1 + k - in0 } as u32, q0 + g % nq.max(1))
        } else {
            let (k, side) = (g - rows_out * nq, side.max(1));
            let j = k % side;
            (in0 as u32 + k / side, if j < left { q0 + j } else { r0 + j - left })
        };
        let (x, y) = (win.gx0.wrapping_add(4 * q), win.gy0.wrapping_add(sy));
        let my = map_index(win.mode, y as i32, h);
        let word = if my < 0 {
            ghost * 0x0101_0101
        } else {
            let row = win.plane.wrapping_add((my as u32 * win.row_pitch) as usize);
            if x < win.w && win.w - x >= 4 {
                // SAFETY: 4 bytes of row `my` inside the image, 4-byte aligned (the
                // contract's plane, pitch and gx0; q a word).
                unsafe { load_global_u32(row.wrapping_add(x as usize)) }
            } else {
                let mut word = 0;
                for k in 0..4 {
                    let col = stage::column(win.mode, x.wrapping_add(k), win.w, C);
                    let v = if col == u32::MAX {
                        ghost
                    } else {
                        // SAFETY: a byte of row `my` inside the image (`column` maps into it).
                        unsafe { load_global_u8(row.wrapping_add(col as usize)) }
                    };
                    word |= v << (8 * k);
                }
                word
            }
        };
        // SAFETY: word q of row sy of the window.
        unsafe { store_shared(raw + sy * win.sw + 4 * q, f32::from_bits(word)) };
        g += threads;
    }
}

/// A border tile's constant fill, added to each output as `fill × (the sum of its taps
/// on ghost cells)`: the tile's ghost cells are staged as 0.
struct GhostFill {
    fill: f32,
    /// The taps' prefix sums (`imma_prefix_side(R)`² f32 in global memory).
    prefix: *const u8,
    /// The tile's first output byte and row.
    origin: (u32, u32),
    /// The image's pixels across and rows.
    extent: (u32, u32),
}

impl GhostFill {
    /// Whether an output of the unit at byte `col`, row `y` of the tile (`IMMA_M` bytes ×
    /// `IMMA_UNIT_ROWS` rows) lies within R pixels of the image's edge (or past it).
    #[inline(always)]
    fn near_edge<const R: u32, const C: u32>(&self, col: u32, y: u32) -> bool {
        let (x0, y0) = (self.origin.0 + col, self.origin.1 + y);
        let (w, h) = self.extent;
        x0 / C < R || (x0 + IMMA_M - 1) / C + R >= w || y0 < R || y0 + IMMA_UNIT_ROWS - 1 + R >= h
    }

    /// The sum of the taps that the output at byte `col`, row `y` of the tile reads from
    /// ghost cells: all taps less those of the rectangle of mask rows and columns whose
    /// cells lie inside the image (0 for an output past the image: no rectangle).
    ///
    /// # Safety
    /// `prefix` holds the prefix sums.
    #[inline(always)]
    unsafe fn ghost_taps<const R: u32, const C: u32>(&self, col: u32, y: u32) -> f32 {
        let n = 2 * R as i32;
        let (px, y) = (((self.origin.0 + col) / C) as i32, (self.origin.1 + y) as i32);
        let (w, h) = (self.extent.0 as i32, self.extent.1 as i32);
        // Mask rows dy0..=dy1 and columns dx0..=dx1 read cells inside the image.
        let (dy0, dy1) = ((R as i32 - y).max(0), (h - 1 - y + R as i32).min(n));
        let (dx0, dx1) = ((R as i32 - px).max(0), (w - 1 - px + R as i32).min(n));
        let side = imma_prefix_side(R);
        // SAFETY: entry (i, j) of the prefix sums, i, j <= 2R + 1 (the contract).
        let p = |i: i32, j: i32| unsafe {
            f32::from_bits(load_global_nc_u32(
                self.prefix.wrapping_add((4 * (i as u32 * side + j as u32)) as usize),
            ))
        };
        let all = p(n + 1, n + 1);
        if dy0 > dy1 || dx0 > dx1 {
            return all;
        }
        all - (p(dy1 + 1, dx1 + 1) - p(dy0, dx1 + 1) - p(dy1 + 1, dx0) + p(dy0, dx0))
    }
}

/// The warps sum a tile's units (16 output bytes × 16 rows, every warp as many) from the
/// staged window at `win` into the shared output tile as saturated bytes: per mask row,
/// four word loads a lane (the unit's two 8-row B blocks) and an MMA per limb and block;
/// with `FILL`, each output adds `fill`'s term.
///
/// # Safety
/// `win` holds the tile's staged window (landed); `out` holds `out_bytes(R, C)` shared
/// bytes no other thread touches until the next barrier; with `FILL`, `fill.prefix` holds
/// the prefix sums.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexed: the fragments and sums stay in registers
unsafe fn sum_tile_imma<const R: u32, const C: u32, const FILL: bool>(
    win: u32,
    frag: &[[[u32; 4]; LIMBS as usize]; 2 * IMMA_MAX_RADIUS as usize + 1],
    (down, up16): (f32, f32),
    fill: &GhostFill,
    out: u32,
) {
    let (raw_w, op) = (imma_raw_w(C), out_pitch(C));
    let (lane, warp) = (thread_x() % 32, thread_x() / 32);
    let across = tile_bytes(C) / IMMA_M;
    let (g, t) = (lane / 4, lane % 4);
    // Lane (g, t) loads row g of each 8-row block, the words at 4t and 16 + 4t of the
    // unit's window (the MMA's B fragment: 4 consecutive k of column n = g).
    let lane_at = g * raw_w + IMMA_LEAD - IMMA_KLEAD + 4 * t;
    for it in 0..opaque(imma_units(R, C) / warps(R, C)) {
        let u = warp + warps(R, C) * it;
        let (j, ur) = (u % across, u / across);
        let mut acc = [[[0u32; 4]; 2]; LIMBS as usize];
        // Only the units within R pixels of the image's edge add the fill's term (the
        // warp's branch: the unit is the warp's).
        let near = FILL && fill.near_edge::<R, C>(IMMA_M * j, IMMA_UNIT_ROWS * ur);
        let row = win + lane_at + IMMA_UNIT_ROWS * ur * raw_w + IMMA_M * j;
        for dy in 0..2 * R as usize + 1 {
            let at = row + dy as u32 * raw_w;
            // SAFETY: rows 16ur + dy + g and + 8 of the window, bytes 16j + 8 + 4t and +
            // 16 (inside the staged row: imma_raw_w), 4-byte aligned.
            let b = unsafe {
                [
                    load_shared_u32(at),
                    load_shared_u32(at + 16),
                    load_shared_u32(at + 8 * raw_w),
                    load_shared_u32(at + 8 * raw_w + 16),
                ]
            };
            for limb in 0..LIMBS as usize {
                acc[limb][0] = imma_mma(frag[dy][limb], b[0], b[1], acc[limb][0]);
                acc[limb][1] = imma_mma(frag[dy][limb], b[2], b[3], acc[limb][1]);
            }
        }
        // Register i of block hb: output byte 16j + g + 8(i / 2), tile row 16ur + 8hb +
        // 2t + i % 2.
        for hb in 0..2u32 {
            for i in 0..4u32 {
                let k = (hb * 4 + i) as usize;
                let (l0, l1, l2) = (acc[0][k / 4][k % 4], acc[1][k / 4][k % 4], acc[2][k / 4][k % 4]);
                let lo = (l1 as i32).wrapping_mul(256).wrapping_add(l0 as i32);
                let (col, y) = (
                    IMMA_M * j + g + 8 * (i / 2),
                    IMMA_UNIT_ROWS * ur + 8 * hb + 2 * t + i % 2,
                );
                let mut v = fma(l2 as i32 as f32, up16, lo as f32 * down);
                if near {
                    // SAFETY: the prefix sums of the contract's table.
                    v += fill.fill * unsafe { fill.ghost_taps::<R, C>(col, y) };
                }
                let v = u8_sat(v);
                // SAFETY: inside the output tile.
                unsafe { store_shared_u8(out + y * op + col, v) };
            }
        }
    }
}

/// Entries per (channels, radius): `threads(R, C)` threads, `min_blocks(R, C)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $c:literal, $r:literal);* $(;)?) => {$(
        crate::launch_bounds!($name, threads($r, $c), layout::families::image_mma::min_blocks($r, $c));
        /// `image_mma` for a fixed channel count and radius.
        ///
        /// # Safety
        /// As `filter`, for a mask of this radius and images of this channel count.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe {
                if imma($r) {
                    filter_imma::<$r, $c>(&a)
                } else {
                    filter::<$r, $c>(&a)
                }
            }
        }
    )*};
}
entries!(
    image_mma_c1_r0 = 1, 0; image_mma_c1_r1 = 1, 1; image_mma_c1_r2 = 1, 2; image_mma_c1_r3 = 1, 3; image_mma_c1_r4 = 1, 4;
    image_mma_c2_r0 = 2, 0; image_mma_c2_r1 = 2, 1; image_mma_c2_r2 = 2, 2; image_mma_c2_r3 = 2, 3; image_mma_c2_r4 = 2, 4;
    image_mma_c3_r0 = 3, 0; image_mma_c3_r1 = 3, 1; image_mma_c3_r2 = 3, 2; image_mma_c3_r3 = 3, 3; image_mma_c3_r4 = 3, 4;
    image_mma_c4_r0 = 4, 0; image_mma_c4_r1 = 4, 1; image_mma_c4_r2 = 4, 2; image_mma_c4_r3 = 4, 3; image_mma_c4_r4 = 4, 4;
);
