//! 2D fast: compile-time radius (one entry point per radius), register-blocked outputs.
//!
//! The block stages its input tile (outputs + halo) in shared memory once, with 16-byte
//! loads. Each thread then owns a 4-wide × `K`-tall patch of outputs in registers: it
//! reads each input row of its window once (LDS.128) and adds it into every output row
//! it touches, so taps are FFMAs with the mask as a constant-bank operand, and shared
//! memory traffic is ~(K+2R)/K window loads per output row instead of 2R+1.
use crate::device::*;

/// Threads across a block: one warp, so a warp's LDS.128/STG.128 cover 512 contiguous bytes.
pub const THREADS_X: u32 = 32;
/// Threads down a block.
pub const THREADS_Y: u32 = 8;
/// Outputs per thread across (one F4).
const QX: u32 = 4;
/// Output tile width of a block.
pub const TILE_W: u32 = THREADS_X * QX;

/// Output rows per thread for radius `r`: more rows share each loaded input row, but
/// code size grows as 4·K·(2r+1)²; the host's launch shape uses the same function.
pub const fn rows_per_thread(r: u32) -> u32 {
    if r <= 4 {
        4
    } else {
        2
    }
}

/// Halo columns staged on each side: `r` rounded up to whole F4s (16-byte aligned rows).
pub const fn pad(r: u32) -> u32 {
    r.div_ceil(4) * 4
}

/// Shared floats a block needs for radius `r` (the host sizes the launch with this).
pub const fn shared_floats(r: u32) -> u32 {
    (TILE_W + 2 * pad(r)) * (THREADS_Y * rows_per_thread(r) + 2 * r)
}

#[inline(always)]
unsafe fn conv2d_fast<const R: u32>(n: *const f32, p: *mut f32, w: u32, h: u32) {
    let k = rows_per_thread(R);
    let pd = pad(R);
    let sw = TILE_W + 2 * pd; // shared row stride (floats), a multiple of 4
    let sh = THREADS_Y * k + 2 * R; // shared rows
    let s = shared_f32();
    let (tx, ty) = (thread_x(), thread_y());
    let tid = ty * THREADS_X + tx;
    let x0 = block_x() * TILE_W; // first output column of the block
    let y0 = block_y() * THREADS_Y * k; // first output row
                                        // Stage rows y0-R .. y0+sh-R, columns x0-pd .. x0+TILE_W+pd; ghost cells are 0.
    let interior = x0 >= pd && x0 + TILE_W + pd <= w && y0 >= R && y0 + sh - R <= h;
    if interior && w % 4 == 0 {
        // Whole tile inside and rows 16-byte aligned: one LDG.128 per 4 cells.
        let f4_per_row = sw / 4;
        let mut i = tid;
        while i < sh * f4_per_row {
            let (sy, c) = (i / f4_per_row, i % f4_per_row);
            let g = ((y0 + sy - R) * w + x0 - pd + 4 * c) as usize;
            *(s.add((sy * sw + 4 * c) as usize) as *mut F4) = load_nc_f4(n.add(g));
            i += THREADS_X * THREADS_Y;
        }
    } else {
        let mut i = tid;
        while i < sh * sw {
            let (sy, sx) = (i / sw, i % sw);
            let (gy, gx) = ((y0 + sy).wrapping_sub(R), (x0 + sx).wrapping_sub(pd));
            *s.add(i as usize) = if gy < h && gx < w {
                load_nc(n.add((gy * w + gx) as usize))
            } else {
                0.0
            };
            i += THREADS_X * THREADS_Y;
        }
    }
    sync_threads();

    // acc[o][j]: output (y0 + ty*k + o, x0 + 4*tx + j).
    let mut acc = [[0.0f32; QX as usize]; 8];
    let win = (QX + 2 * pd) as usize;
    // Fully unrolled up to r = 4. Beyond, ptxas would hoist every row's window into
    // registers and spill; an opaque bound keeps the row loop rolled (taps stay unrolled).
    let rows = if R <= 4 {
        k + 2 * R
    } else {
        core::hint::black_box(k + 2 * R)
    };
    for i in 0..rows {
        // Shared row ty*k + i holds input row (its output row - R + i).
        let row = s.add(((ty * k + i) * sw + QX * tx) as usize);
        let mut v = [0.0f32; 20];
        for c in 0..win / 4 {
            let f = *(row.add(4 * c) as *const F4);
            v[4 * c..4 * c + 4].copy_from_slice(&f.0);
        }
        // Input row i feeds output row o through mask row fr = i - o.
        for o in 0..k {
            let fr = i.wrapping_sub(o);
            if fr <= 2 * R {
                for fc in 0..2 * R + 1 {
                    let m = Mask2d::get(fr * (2 * R + 1) + fc);
                    for j in 0..QX {
                        acc[o as usize][j as usize] =
                            fma(m, v[(pd - R + fc + j) as usize], acc[o as usize][j as usize]);
                    }
                }
            }
        }
    }

    let x = x0 + QX * tx;
    for o in 0..k {
        let y = y0 + ty * k + o;
        if y < h {
            let out = p.add((y * w + x) as usize);
            if w % 4 == 0 && x + QX <= w {
                store_f4(out, F4(acc[o as usize]));
            } else {
                for j in 0..QX {
                    if x + j < w {
                        *out.add(j as usize) = acc[o as usize][j as usize];
                    }
                }
            }
        }
    }
}

macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        /// `conv2d_fast` at a fixed radius. Launch: block (32, 8), grid
        /// (ceil(w / 128), ceil(h / (8·rows_per_thread(R)))), `shared_floats(R)·4` bytes.
        ///
        /// # Safety
        /// `n`, `p` hold `w*h` floats; `MASK_2D` holds the `(2R+1)^2` taps.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(n: *const f32, p: *mut f32, w: u32, h: u32) {
            conv2d_fast::<$r>(n, p, w, h)
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
