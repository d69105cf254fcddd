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
    k_steps, table_bytes, window_bytes, window_pitch, window_rows, window_w, window_words, GROUPS, LO_SHIFT, MMA_M,
    OUT_BYTES, OUT_PITCH, STRIP_W, SUM_BITS, THREADS, TILE_H, TILE_W,
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

/// # Safety
/// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·C` u8 pixels;
/// `MASK_2D` holds the `(2R+1)^2` taps, whose sum of |taps| is finite; under the constant
/// mode `a.fill` is an integer of magnitude at most 255; launched as
/// `layout::families::image_mma` says for `C` channels.
#[inline(always)]
unsafe fn filter<const R: u32, const C: u32>(a: &ConvArgs) {
    let (n, p) = (a.input as *const u8, a.output as *mut u8);
    let [w, h, _] = a.extent;
    let (wc, pitch) = (w * C, a.pitch);
    let (tid, lane, warp) = (thread_x(), thread_x() % 32, thread_x() / 32);
    let (ks, ww, wp, wr, words) = (
        k_steps(R, C),
        window_w(R, C),
        window_pitch(R, C),
        window_rows(R),
        window_words(R, C),
    );
    let taps = 2 * R + 1;
    let win = shared_addr(shared_f32());
    let out = win + window_bytes(R, C);
    let table = out + OUT_BYTES;

    // The mask's scale, then the B fragments of every (mask row, k-step) for each lane:
    // b = {B[k][g], B[k+1][g]}, {B[k+8][g], B[k+9][g]} with k = 16·step + 2(l % 4),
    // g = l / 4; hi, then lo.
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
    let fill_h = f16_bits(if a.mode == layout::mode::code::CONSTANT {
        a.fill
    } else {
        0.0
    });

    let tiles_x = wc.div_ceil(TILE_W).max(1); // never 0: no division-by-zero panic path
    let tiles = tiles_x * h.div_ceil(TILE_H);
    let mut tile = block_x();
    // The tile whose outputs wait in the shared output tile.
    let mut done: Option<(u32, u32)> = None;
    loop {
        let next = if tile < tiles {
            Some(((tile % tiles_x) * TILE_W, (tile / tiles_x) * TILE_H))
        } else {
            None
        };
        // Stage the next tile's window: window cell (sy, col) is input row y0 - R + sy,
        // column x0 - R·C + col.
        if let Some((x0, y0)) = next {
            let gx0 = x0.wrapping_sub(R * C);
            let interior = y0 >= R && y0 + TILE_H + R <= h && x0 >= R * C + 3 && gx0 + ww + 4 <= wc;
            if interior {
                // Two aligned words around each 4 bytes, then one funnel shift: a batch
                // of words' loads first, so their latencies overlap.
                const BATCH: u32 = 8;
                let per = (wr * words).div_ceil(THREADS);
                for first in (0..per).step_by(BATCH as usize) {
                    let mut lo = [0u32; BATCH as usize];
                    let mut hi = [0u32; BATCH as usize];
                    let cell = |i: u32| {
                        let idx = tid + (first + i) * THREADS;
                        let (sy, q) = (idx / words, idx % words);
                        let addr = n.wrapping_add((y0 - R + sy) as usize * pitch as usize + (gx0 + 4 * q) as usize);
                        (idx < wr * words && first + i < per, addr, win + 2 * (sy * wp + 4 * q))
                    };
                    for i in 0..BATCH {
                        let (live, addr, _) = cell(i);
                        if live {
                            let al = addr.wrapping_sub(addr as usize & 3);
                            // SAFETY: interior: both aligned words lie inside the row's
                            // bytes (gx0 >= 3, gx0 + ww + 4 <= wc).
                            unsafe {
                                lo[i as usize] = load_global_nc_u32(al);
                                hi[i as usize] = load_global_nc_u32(al.wrapping_add(4));
                            }
                        }
                    }
                    for i in 0..BATCH {
                        let (live, addr, dst) = cell(i);
                        if live {
                            let sh = addr as u32 & 3;
                            let (x, y) = widen(prmt(lo[i as usize], hi[i as usize], 0x3210 + 0x1111 * sh));
                            // SAFETY: window cell (sy, 4q), 8-byte aligned, inside the window.
                            unsafe { store_shared_u32x2(dst, x, y) };
                        }
                    }
                }
            } else {
                let mut idx = tid;
                while idx < wr * words {
                    let (sy, q) = (idx / words, idx % words);
                    let gy = (y0 + sy).wrapping_sub(R);
                    let row = if gy < h {
                        gy as i32
                    } else {
                        map_index(a.mode, gy as i32, h as i32)
                    };
                    // SAFETY: the row is mapped into the image (or -1), the columns by the
                    // mode; window cell (sy, 4q) is inside the window.
                    unsafe {
                        border_word(
                            n,
                            pitch,
                            wc,
                            C,
                            a.mode,
                            fill_h,
                            row,
                            gx0.wrapping_add(4 * q),
                            win + 2 * (sy * wp + 4 * q),
                        )
                    };
                    idx += THREADS;
                }
            }
        }
        // Write out the finished tile's outputs, 4 bytes at a time where its rows allow.
        if let Some((x0, y0)) = done {
            let per_row = TILE_W / 4;
            let mut idx = tid;
            while idx < TILE_H * per_row {
                let (oy, q) = (idx / per_row, idx % per_row);
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
        let Some(cur) = next else { break };
        sync_threads();
        // Each warp: its 32-column strip, 16 rows at a time.
        for mb in 0..TILE_H / MMA_M {
            let mut acc_hi = [[0.0f32; 4]; GROUPS as usize];
            let mut acc_lo = [[0.0f32; 4]; GROUPS as usize];
            // Lane l gives row l % 16 of A, columns 8(l / 16)..: ldmatrix's 4 matrices.
            let a_lane = win + 2 * ((mb * MMA_M + lane % 16) * wp + warp * STRIP_W + 8 * (lane / 16));
            for dy in 0..taps {
                for step in 0..ks {
                    // SAFETY: this lane's entry of the table.
                    let b = unsafe { load_shared_u32x4(table + 16 * ((dy * ks + step) * 32 + lane)) };
                    for (grp, (hi, lo)) in acc_hi.iter_mut().zip(acc_lo.iter_mut()).enumerate() {
                        // SAFETY: rows mb·16 + dy + 0..16 < wr, columns up to the window's
                        // width; 16-byte aligned (wp and the offsets are multiples of 8).
                        let x = unsafe { ldmatrix_x4(a_lane + 2 * (dy * wp + 8 * grp as u32 + 16 * step)) };
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
        sync_threads();
        done = Some(cur);
        tile += grid_dim_x();
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
