//! Pitched u8 images of 1 to 4 interleaved channels on the tensor cores: radius and
//! channel count compiled in (`image_mma_c{C}_r{R}`), every ghost-cell mode.
//!
//! Mask row `dy` applied to a row of interleaved bytes is a Toeplitz product: output
//! column `x0 + n` (n < 8) reads input columns `x0 - R·C + n + C·dx`, so with
//! `A[m][k]` = input row `y0 + m + dy - R`, column `x0 - R·C + k` (16 rows, 16 columns a
//! step, as fp16: u8 is exact) and `B[k][n]` = tap `(dy, dx)` where `k = n + C·dx`, else
//! 0, one `mma.sync.m16n8k16` adds that mask row into 16 × 8 outputs. Taps are split
//! into an integer hi part and a lo part (the rest times 2^11), both fp16, after scaling
//! the mask so that its sum of |taps| is at most 2^15 (`layout::families::image_mma`):
//! hi sums of u8 pixels are then exact integers in the fp32 accumulators, lo sums are
//! 2^11 times smaller, and `(hi + lo·2^-11)·2^-s` keeps fp32 accuracy.
//! Geometry: `layout::families::image_mma`.
use crate::device::*;
use layout::families::image_mma::{
    a_blocks, k_steps, raw_chunks, raw_pitch, table_bytes, window_bytes, window_pitch, window_rows, window_w,
    window_words, BULK_FROM_RADIUS, GROUPS, LO_SHIFT, MAX_A_BLOCKS, MMA_M, OUT_BYTES, OUT_PITCH, STRIP_W, SUM_BITS,
    THREADS, TILE_H, TILE_W,
};
use layout::mode::map_index;

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

/// `d = a·b + c` for a warp's 16 × 8 fp32 block (`mma.sync.aligned.m16n8k16.row.col`,
/// fp16 inputs): `a` 16 × 16 and `b` 16 × 8 in the PTX fragment layouts.
#[inline(always)]
fn mma(a: [u32; 4], b0: u32, b1: u32, c: [f32; 4]) -> [f32; 4] {
    let (d0, d1, d2, d3): (f32, f32, f32, f32);
    // SAFETY: registers only; every lane of the warp runs it (callers keep it out of
    // divergent code: the loops around it are uniform).
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b0 = in(reg32) b0, b1 = in(reg32) b1,
            c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    [d0, d1, d2, d3]
}

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

/// The fp32 value of fp16 bits (`cvt.f32.f16`, exact).
#[inline(always)]
fn f16_value(bits: u32) -> f32 {
    let v: f32;
    // SAFETY: a conversion between registers.
    unsafe {
        core::arch::asm!("cvt.f32.f16 {v}, {h};", v = out(reg32) v, h = in(reg16) bits as u16,
            options(pure, nomem, nostack, preserves_flags));
    }
    v
}

/// `v` rounded to the nearest integer, ties to even (`cvt.rni.f32.f32`).
#[inline(always)]
fn rint(v: f32) -> f32 {
    let d: f32;
    // SAFETY: a conversion between registers.
    unsafe {
        core::arch::asm!("cvt.rni.f32.f32 {d}, {v};", d = out(reg32) d, v = in(reg32) v,
            options(pure, nomem, nostack, preserves_flags));
    }
    d
}

/// 2^e as f32, for `-126 <= e <= 127`.
#[inline(always)]
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// The exponent `s` the taps are scaled by: the largest with `sum·2^s <= 2^SUM_BITS`
/// (`sum` the mask's sum of |taps|, finite), kept where `2^s` and `2^-s` are normal
/// floats (a sum below 2^-112 leaves every u8 output 0 either way).
#[inline(always)]
fn scale_exponent(sum: f32) -> i32 {
    if sum == 0.0 {
        return 0;
    }
    // sum in [2^e, 2^(e+1)): sum·2^(SUM_BITS - 1 - e) in [2^(SUM_BITS-1), 2^SUM_BITS).
    let e = ((sum.to_bits() >> 23) & 0xff) as i32 - 127;
    (SUM_BITS - 1 - e).clamp(-126, 126)
}

/// A tap scaled by 2^s, split into fp16 bits (hi, lo): hi the nearest integer (then the
/// nearest fp16, an integer too), lo the rest times 2^LO_SHIFT.
#[inline(always)]
fn split(v: f32) -> (u32, u32) {
    let hi = f16_bits(rint(v));
    let rest = v - f16_value(hi); // exact: |rest| is at most half an fp16 step of hi
    (hi, f16_bits(rest * pow2(LO_SHIFT)))
}

/// The 4 bytes of a word as fp16 pairs (bytes 0, 1 and 2, 3): each byte `b` becomes the
/// fp16 `1024 + b` by its bit pattern, less 1024 (exact).
#[inline(always)]
fn widen(w: u32) -> (u32, u32) {
    let magic = |p: u32| {
        let d: u32;
        // SAFETY: registers only.
        unsafe {
            core::arch::asm!("sub.f16x2 {d}, {p}, {m};", d = out(reg32) d, p = in(reg32) p | 0x6400_6400,
                m = in(reg32) 0x6400_6400u32, options(pure, nomem, nostack, preserves_flags));
        }
        d
    };
    (magic(prmt(w, 0, 0x4140)), magic(prmt(w, 0, 0x4342)))
}

/// Window word `(sy, q)` of a tile at a border, cell by cell: each of its 4 columns
/// (from `gx`, wrapping) of plane row `row` (`-1`: the fill value) mapped by the mode.
/// Out of line: border tiles only.
///
/// # Safety
/// The image holds `h` rows of `wc` bytes `pitch` apart from `n`; `dst` is an 8-byte
/// aligned shared address of 8 writable bytes.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // scalars: a struct would go through local memory
unsafe fn border_word(n: *const u8, pitch: u32, wc: u32, c: u32, mode: u32, fill_h: u32, row: i32, gx: u32, dst: u32) {
    let mut h = [0u32; 4];
    for (k, v) in h.iter_mut().enumerate() {
        let x = gx.wrapping_add(k as u32);
        let col = if row < 0 {
            u32::MAX
        } else if x < wc {
            x
        } else {
            crate::stage::column(mode, x, wc, c)
        };
        *v = if col == u32::MAX {
            fill_h
        } else {
            // SAFETY: row and col lie inside the image (mapped into it).
            f16_bits(unsafe { <u8 as Pixel>::load(n.wrapping_add(row as usize * pitch as usize + col as usize)) })
        };
    }
    // SAFETY: per the contract.
    unsafe { store_shared_u32x2(dst, h[0] | h[1] << 16, h[2] | h[3] << 16) }
}

/// Writes the output tile at `(x0, y0)` from the shared output tile: 16 bytes a thread
/// where the tile is whole and its rows 16-byte aligned (a load, a store), else a word at
/// a time where its rows allow, else byte by byte.
///
/// # Safety
/// `p` holds `h` rows `pitch` bytes apart of `wc` bytes; `out` holds the tile's bytes.
#[inline(always)]
unsafe fn write_out(p: *mut u8, wc: u32, h: u32, pitch: u32, x0: u32, y0: u32, out: u32) {
    let tid = thread_x();
    let base = p.wrapping_add(y0 as usize * pitch as usize + x0 as usize);
    if x0 + TILE_W <= wc && y0 + TILE_H <= h && pitch.is_multiple_of(16) && (base as usize).is_multiple_of(16) {
        const PER_ROW: u32 = TILE_W / 16;
        for k in 0..TILE_H * PER_ROW / THREADS {
            let idx = tid + k * THREADS;
            let (oy, q) = (idx / PER_ROW, idx % PER_ROW);
            // SAFETY: 16 bytes of the output tile (OUT_PITCH a multiple of 16) and of
            // the image's row, aligned.
            unsafe {
                let v = load_shared_u32x4(out + oy * OUT_PITCH + 16 * q);
                store_global_u32x4(base.wrapping_add(oy as usize * pitch as usize + 16 * q as usize), v);
            }
        }
        return;
    }
    const PER_ROW: u32 = TILE_W / 4;
    let mut idx = tid;
    while idx < TILE_H * PER_ROW {
        let (oy, q) = (idx / PER_ROW, idx % PER_ROW);
        let (y, x) = (y0 + oy, x0 + 4 * q);
        if y < h && x < wc {
            // SAFETY: a word of the output tile.
            let v = unsafe { load_shared_u32(out + oy * OUT_PITCH + 4 * q) };
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
        idx += THREADS;
    }
}

/// The B table (every (mask row, k-step) fragment of each lane: b = {B[k][g], B[k+1][g]},
/// {B[k+8][g], B[k+9][g]} with k = 16·step + 2(l % 4), g = l / 4; hi, then lo) into the
/// shared `table`, the taps scaled by 2^s (`scale_exponent` of the mask's sum of |taps|);
/// returns 2^-s.
///
/// # Safety
/// `table` holds `table_bytes(R, C)` shared bytes no thread reads until the next barrier.
#[inline(always)]
unsafe fn build_table<const R: u32, const C: u32>(table: u32) -> f32 {
    let (taps, ks, tid) = (2 * R + 1, k_steps(R, C), thread_x());
    let mut sum = 0.0f32;
    for i in 0..(taps * taps) as usize {
        sum += f32::from_bits(Mask2d::get(i).to_bits() & 0x7fff_ffff);
    }
    let s = scale_exponent(sum);
    let (up, down) = (pow2(s), pow2(-s));
    let mut e = tid;
    while e < table_bytes(R, C) / 16 {
        let (dy, step, l) = (e / (ks * 32), (e / 32) % ks, e % 32);
        let (g, t) = (l / 4, l % 4);
        let tap = |k: u32| {
            let d = k.wrapping_sub(g);
            if d < 2 * R * C + 1 && d % C == 0 {
                split(Mask2d::get((dy * taps + d / C) as usize) * up)
            } else {
                (0, 0)
            }
        };
        let k = 16 * step + 2 * t;
        let (v0, v1, v8, v9) = (tap(k), tap(k + 1), tap(k + 8), tap(k + 9));
        // SAFETY: entry e of the table, inside the block's shared memory.
        unsafe {
            store_shared_u32x4(
                table + 16 * e,
                [
                    v0.0 | v1.0 << 16,
                    v8.0 | v9.0 << 16,
                    v0.1 | v1.1 << 16,
                    v8.1 | v9.1 << 16,
                ],
            )
        };
        e += THREADS;
    }
    down
}

/// Stages the window of the tile at `(x0, y0)` as fp16: window cell `(sy, col)` is input
/// row `y0 - R + sy`, column `x0 - R·C + col`, each mapped by the mode outside the image.
/// From `BULK_FROM_RADIUS` on, interior tiles copy their input rows' bytes with 16-byte
/// `cp.async`s into `raw`, every copy in flight at once (the word loads' batches waited
/// out the memory latency once per batch), then widen them; below it, and in tiles near
/// the border, the window goes word by word (`stage_words`).
///
/// # Safety
/// As `filter`; `win` holds `window_bytes(R, C)` shared bytes and `raw` `raw_bytes(R, C)`,
/// which no thread reads until the next barrier. Every thread of the block calls it (it
/// may wait at barriers).
#[inline(always)]
unsafe fn stage<const R: u32, const C: u32>(a: &ConvArgs, x0: u32, y0: u32, win: u32, raw: u32) {
    let (wc, h) = (a.extent[0] * C, a.extent[1]);
    let gx0 = x0.wrapping_sub(R * C);
    // SAFETY: forwarded; the bulk test is `stage_raw`'s contract, the word test
    // `stage_words`' own, per word. The branch is the block's (x0, y0 are), so every
    // thread meets the barriers. (Each test is written out in its own branch: through one
    // shared closure the PTX differed from the timed and sanitized builds'.)
    unsafe {
        if R >= BULK_FROM_RADIUS {
            if y0 >= R && y0 + TILE_H + R <= h && x0 >= R * C + 15 && gx0 + raw_pitch(R, C) <= wc {
                stage_raw::<R, C>(a, y0, gx0, raw);
                sync_threads(); // every copy landed, of every thread
                widen_raw::<R, C>(a, y0, gx0, win, raw);
                sync_threads(); // raw is read before the table and the output tile overwrite it
            } else {
                stage_words::<R, C, true>(a, x0, y0, win)
            }
        } else if y0 >= R && y0 + TILE_H + R <= h && x0 >= R * C + 3 && gx0 + window_w(R, C) + 4 <= wc {
            stage_words::<R, C, false>(a, x0, y0, win)
        } else {
            stage_words::<R, C, true>(a, x0, y0, win)
        }
    }
}

/// Copies the `window_rows(R)` input rows of an interior tile's window, from the 16-byte
/// aligned chunk holding column `gx0` on, `raw_chunks(R, C)` chunks a row, into `raw`
/// (rows `raw_pitch` apart), and waits for this thread's copies.
///
/// # Safety
/// Rows `y0 - R .. y0 + TILE_H + R` are inside the image and `15 <= gx0`,
/// `gx0 + raw_pitch(R, C) <= w·C`: every chunk lies inside its row's bytes.
#[inline(always)]
unsafe fn stage_raw<const R: u32, const C: u32>(a: &ConvArgs, y0: u32, gx0: u32, raw: u32) {
    let n = a.input as *const u8;
    let (chunks, rows) = (raw_chunks(R, C), window_rows(R));
    let mut idx = thread_x();
    while idx < rows * chunks {
        let (sy, i) = (idx / chunks, idx % chunks);
        let start = n.wrapping_add((y0 - R + sy) as usize * a.pitch as usize + gx0 as usize);
        let chunk = start.wrapping_sub(start as usize & 15).wrapping_add(16 * i as usize);
        // SAFETY: 16 aligned bytes of the row (the contract: at most 15 before column
        // gx0, and raw_pitch from the aligned start ends by gx0 + raw_pitch <= w·C);
        // raw row sy, chunk i, 16-byte aligned inside raw.
        unsafe { cp_async_f4(raw + sy * raw_pitch(R, C) + 16 * i, chunk as *const f32, 16) };
        idx += THREADS;
    }
    cp_async_commit();
    cp_async_wait::<0>();
}

/// Widens an interior tile's raw window (`stage_raw`, landed) into the fp16 window, a
/// word of 4 cells at a time: the two raw words around its 4 bytes, one funnel shift.
///
/// # Safety
/// `raw` holds the landed copies of `stage_raw(a, y0, gx0, raw)` (after a barrier); `win`
/// holds `window_bytes(R, C)` shared bytes no other thread reads until the next barrier.
#[inline(always)]
unsafe fn widen_raw<const R: u32, const C: u32>(a: &ConvArgs, y0: u32, gx0: u32, win: u32, raw: u32) {
    let n = a.input as *const u8;
    let (wp, words, rows) = (window_pitch(R, C), window_words(R, C), window_rows(R));
    let mut idx = thread_x();
    while idx < rows * words {
        let (sy, q) = (idx / words, idx % words);
        // Where the row's window starts in its first chunk, then this word's bytes.
        let lead = (n as u32)
            .wrapping_add((y0 - R + sy).wrapping_mul(a.pitch))
            .wrapping_add(gx0)
            & 15;
        let o = lead + 4 * q;
        let at = raw + sy * raw_pitch(R, C) + (o & !3);
        // SAFETY: both words lie inside raw row sy: o <= 15 + window_w - 4, so they end
        // by window_w + 19 < raw_pitch = window_w + 24 (window_w is 8 more than a multiple
        // of 16); landed, after the caller's barrier.
        let (lo, hi) = unsafe { (load_shared_u32(at), load_shared_u32(at + 4)) };
        let (x, y) = widen(prmt(lo, hi, 0x3210 + 0x1111 * (o & 3)));
        // SAFETY: window cell (sy, 4q), 8-byte aligned, inside the window.
        unsafe { store_shared_u32x2(win + 2 * (sy * wp + 4 * q), x, y) };
        idx += THREADS;
    }
}

/// The window's words, 4 cells each: two aligned input words around each 4 bytes, then
/// one funnel shift, a batch of words' loads first so that their latencies overlap. The
/// batches unrolled at r <= 1 in interior tiles (H200, 8192^2 x 3: 252 us against 305
/// rolled), rolled above (unrolled, ptxas spilled at r = 3 at 80 registers). In tiles at
/// a border (`EDGE`), each word's row is mapped by the mode, and only the words whose
/// aligned reads would leave the row, or whose row is the fill, go cell by cell
/// (`border_word`): a tile at the left or right edge has one or two such words a row,
/// where every word went cell by cell.
///
/// # Safety
/// As `stage`; without `EDGE`, every word's aligned reads lie inside its row (the
/// interior test of `stage`).
#[inline(always)]
unsafe fn stage_words<const R: u32, const C: u32, const EDGE: bool>(a: &ConvArgs, x0: u32, y0: u32, win: u32) {
    let n = a.input as *const u8;
    let (wc, h, pitch, tid) = (a.extent[0] * C, a.extent[1], a.pitch, thread_x());
    let (wp, wr, words) = (window_pitch(R, C), window_rows(R), window_words(R, C));
    let gx0 = x0.wrapping_sub(R * C);
    let fill_h = if EDGE && a.mode == layout::mode::code::CONSTANT {
        f16_bits(a.fill)
    } else {
        0
    };
    // Window word idx: whether it goes the fast way, its row (mapped; u32::MAX: the fill), its
    // first column, its window cell.
    let at = |idx: u32| {
        let (sy, q) = (idx / words, idx % words);
        let gy = (y0 + sy).wrapping_sub(R);
        let row = if !EDGE || gy < h {
            gy
        } else {
            map_index(a.mode, gy as i32, h as i32) as u32
        };
        let gx = gx0.wrapping_add(4 * q);
        // The aligned words around columns gx..gx + 4 lie in 3 bytes before gx and 4
        // after gx + 4 (gx "negative" wraps above wc).
        let fast = !EDGE || (row < h && gx >= 3 && gx < wc && wc - gx >= 8);
        (fast, row, gx, win + 2 * (sy * wp + 4 * q))
    };
    // Border tiles batch 4 words: their rows and columns stay live between the loads
    // and the stores (ptxas spilled 28-68 bytes at r <= 1 and 64 registers with 8).
    const BATCH: u32 = 8;
    let batch = if EDGE { BATCH / 2 } else { BATCH };
    let per = (wr * words).div_ceil(THREADS);
    for first in (0..if R <= 1 && !EDGE { per } else { opaque(per) }).step_by(batch as usize) {
        let mut lo = [0u32; BATCH as usize];
        let mut hi = [0u32; BATCH as usize];
        let word = |i: u32| {
            let (fast, row, gx, dst) = at(tid + (first + i) * THREADS);
            (
                tid + (first + i) * THREADS < wr * words && first + i < per,
                fast,
                row,
                gx,
                dst,
            )
        };
        for i in 0..batch {
            let (live, fast, row, gx, _) = word(i);
            if live && fast {
                let addr = n.wrapping_add(row as usize * pitch as usize + gx as usize);
                let al = addr.wrapping_sub(addr as usize & 3);
                // SAFETY: both aligned words lie inside the row's bytes (the interior
                // test, or `fast`), the row inside the image (mapped).
                unsafe {
                    lo[i as usize] = load_global_nc_u32(al);
                    hi[i as usize] = load_global_nc_u32(al.wrapping_add(4));
                }
            }
        }
        for i in 0..batch {
            let (live, fast, row, gx, dst) = word(i);
            if live && fast {
                let sh = n.wrapping_add(row as usize * pitch as usize + gx as usize) as u32 & 3;
                let (x, y) = widen(prmt(lo[i as usize], hi[i as usize], 0x3210 + 0x1111 * sh));
                // SAFETY: window cell (sy, 4q), 8-byte aligned, inside the window.
                unsafe { store_shared_u32x2(dst, x, y) };
            }
        }
    }
    if EDGE {
        // The other words, after the batches: nothing of theirs is live across the call.
        let mut idx = tid;
        while idx < wr * words {
            let (fast, row, gx, dst) = at(idx);
            if !fast {
                // SAFETY: the row is mapped into the image (or -1), the columns by the
                // mode; window cell (sy, 4q) is inside the window.
                unsafe { border_word(n, pitch, wc, C, a.mode, fill_h, row as i32, gx, dst) };
            }
            idx += THREADS;
        }
    }
}

/// Each warp sums its 32-column strip of the tile, 16 rows at a time, into the shared
/// output tile as saturated bytes (`down`: the taps' scale back).
///
/// # Safety
/// `win` holds the staged window and `table` the B table (after a barrier); `out`
/// holds `OUT_BYTES` shared bytes no other thread touches until the next barrier.
#[inline(always)]
unsafe fn sum_tile<const R: u32, const C: u32>(win: u32, table: u32, out: u32, down: f32) {
    let (taps, ks, wp) = (2 * R + 1, k_steps(R, C), window_pitch(R, C));
    let (lane, warp) = (thread_x() % 32, thread_x() / 32);
    // Rolled: unrolled, ptxas overlapped the row blocks and spilled at 80 registers.
    for mb in 0..opaque(TILE_H / MMA_M) {
        let mut acc_hi = [[0.0f32; 4]; GROUPS as usize];
        let mut acc_lo = [[0.0f32; 4]; GROUPS as usize];
        // Lane l gives row l % 16 of 8 columns from 8(l / 16): ldmatrix's 4 matrices.
        let a_lane = win + 2 * ((mb * MMA_M + lane % 16) * wp + warp * STRIP_W + 8 * (lane / 16));
        for dy in 0..taps {
            // The strip's 8-column blocks of these 16 rows, each loaded once: m[2j],
            // m[2j + 1] are block j's rows 0..8 and 8..16. Group `grp`'s A at step `step`
            // is blocks grp + 2·step and the next (one `ldmatrix` each had read 8 blocks
            // a mask row where 7 are distinct at 2 steps, 4 where 5 are at 1, and
            // shared-memory reads bounded r >= 2).
            let mut m = [0u32; 2 * MAX_A_BLOCKS as usize];
            let row = a_lane + 2 * dy * wp;
            for j in 0..a_blocks(R, C) / 2 {
                // SAFETY: rows mb·16 + dy + 0..16 < wr, blocks 2j, 2j + 1 inside the
                // window's width (`a_blocks`); 16-byte aligned (wp, offsets multiples of 8).
                let x = unsafe { ldmatrix_x4(row + 2 * 16 * j) };
                m[4 * j as usize..4 * j as usize + 4].copy_from_slice(&x);
            }
            if a_blocks(R, C) % 2 == 1 {
                let j = a_blocks(R, C) / 2;
                // SAFETY: as above, block 2j alone (lanes 0..16 give the addresses).
                let x = unsafe { ldmatrix_x2(row + 2 * 16 * j) };
                m[4 * j as usize..4 * j as usize + 2].copy_from_slice(&x);
            }
            for step in 0..ks {
                // SAFETY: this lane's entry of the table.
                let b = unsafe { load_shared_u32x4(table + 16 * ((dy * ks + step) * 32 + lane)) };
                for (grp, (hi, lo)) in acc_hi.iter_mut().zip(acc_lo.iter_mut()).enumerate() {
                    let k = 2 * (grp + 2 * step as usize);
                    let x = [m[k], m[k + 1], m[k + 2], m[k + 3]];
                    *hi = mma(x, b[0], b[1], *hi);
                    *lo = mma(x, b[2], b[3], *lo);
                }
            }
        }
        // Outputs (g, 2t..2t+1) and (g + 8, 2t..2t+1) of each group, as bytes.
        let (g, t) = (lane / 4, lane % 4);
        for (grp, (hi, lo)) in acc_hi.iter().zip(acc_lo.iter()).enumerate() {
            let v = |i: usize| u8_sat(fma(lo[i], pow2(-LO_SHIFT), hi[i]) * down);
            let col = warp * STRIP_W + 8 * grp as u32 + 2 * t;
            let row = mb * MMA_M + g;
            // SAFETY: inside the output tile, 2-byte aligned.
            unsafe {
                store_shared_u16(out + row * OUT_PITCH + col, prmt(v(0), v(1), 0x0040));
                store_shared_u16(out + (row + 8) * OUT_PITCH + col, prmt(v(2), v(3), 0x0040));
            }
        }
    }
}

/// # Safety
/// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·C` u8 pixels;
/// `MASK_2D` holds the `(2R+1)^2` taps, whose sum of |taps| is finite; under the constant
/// mode `a.fill` is an integer of magnitude at most 255; launched as
/// `layout::families::image_mma` says for `C` channels.
#[inline(always)]
unsafe fn filter<const R: u32, const C: u32>(a: &ConvArgs) {
    let (wc, h) = (a.extent[0] * C, a.extent[1]);
    // One tile per block, the block scheduler balancing the launch: persistent blocks
    // looping over the tiles left SMs idle (ncu, image_mma_c3_r1: the busiest SM active
    // 772 k cycles, the least 398 k, of 797 k) and ran r = 1 at 452 us against 272.
    // Of block b, the row of tiles `wc` bytes wide (never 0 tiles: no division-by-zero
    // panic path).
    let origin = |b: u32, wc: u32| {
        let tiles_x = wc.div_ceil(TILE_W).max(1);
        ((b % tiles_x) * TILE_W, (b / tiles_x) * TILE_H)
    };
    let (x0, y0) = origin(block_x(), wc);
    if y0 >= h {
        return; // past the last tile (the whole block: no barrier is left waiting)
    }
    let win = shared_addr(shared_f32());
    // SAFETY: forwarded from the contract; the window, the raw window (where the output
    // tile and the table go), output tile and table are the block's shared memory as
    // layout sums it, each touched between the barriers below as the callees ask. The
    // table after the window: its scale and taps would otherwise stay live across the
    // staging (ptxas spilled at 64 registers).
    unsafe {
        stage::<R, C>(a, x0, y0, win, win + window_bytes(R, C));
        // The output tile's and the table's addresses from the window's where each is
        // used: kept as values of their own, one was spilled (ptxas, r = 1, 64
        // registers).
        let table = win + window_bytes(R, C) + OUT_BYTES;
        let down = build_table::<R, C>(table);
        sync_threads();
        sum_tile::<R, C>(win, table, win + window_bytes(R, C), down);
        sync_threads();
        // The origin again, from an opaque copy of the block index: kept from the
        // start, it was spilled across the sums (ptxas, 64 registers).
        let (x0, y0) = origin(opaque(block_x()), opaque(wc));
        let out = shared_addr(shared_f32()) + opaque(window_bytes(R, C));
        write_out(a.output as *mut u8, wc, h, a.pitch, x0, y0, out);
    }
}

/// Entries per (channels, radius): `THREADS` threads, `min_blocks(R, C)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $c:literal, $r:literal);* $(;)?) => {$(
        crate::launch_bounds!($name, THREADS, layout::families::image_mma::min_blocks($r, $c));
        /// `image_mma` for a fixed channel count and radius.
        ///
        /// # Safety
        /// As `filter`, for a mask of this radius and images of this channel count.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { filter::<$r, $c>(&a) }
        }
    )*};
}
entries!(
    image_mma_c1_r0 = 1, 0; image_mma_c1_r1 = 1, 1; image_mma_c1_r2 = 1, 2; image_mma_c1_r3 = 1, 3; image_mma_c1_r4 = 1, 4;
    image_mma_c2_r0 = 2, 0; image_mma_c2_r1 = 2, 1; image_mma_c2_r2 = 2, 2; image_mma_c2_r3 = 2, 3; image_mma_c2_r4 = 2, 4;
    image_mma_c3_r0 = 3, 0; image_mma_c3_r1 = 3, 1; image_mma_c3_r2 = 3, 2; image_mma_c3_r3 = 3, 3; image_mma_c3_r4 = 3, 4;
    image_mma_c4_r0 = 4, 0; image_mma_c4_r1 = 4, 1; image_mma_c4_r2 = 4, 2; image_mma_c4_r3 = 4, 3; image_mma_c4_r4 = 4, 4;
);
