//! 2D tiled, halos through the cache (textbook Fig. 7.15): the block is the output tile;
//! its own inputs go to shared memory, halo cells are read from global (L1/L2).
//!
//! `conv2d_tiled_cached` takes the radius at run time; `conv2d_tiled_cached_r{R}`
//! (R = 0..=8) fix it at compile time, as the CUDA C++ twin's `template <int R>`.
use crate::device::*;

/// Side of the tile: the block is `T`×`T` threads.
const T: u32 = 32;

/// Launch with a 32×32 block and `32*32*4` bytes of dynamic shared memory; grid
/// `ceil(w/32)`×`ceil(h/32)`.
///
/// # Safety
/// `n`, `p` hold `w*h` floats; `MASK_2D` holds `(2r+1)^2` taps; launch as above;
/// `w+2r`, `h+2r` < 2^32.
#[inline(always)]
unsafe fn body(radius: u32, n: *const f32, p: *mut f32, w: u32, h: u32) {
    let s = shared_f32();
    let (tx, ty) = (thread_x(), thread_y());
    let col = block_x() * T + tx;
    let row = block_y() * T + ty;
    let (wu, ru) = (w as usize, radius as usize);
    let center = row as usize * wu + col as usize;
    *s.add((ty * T + tx) as usize) = if row < h && col < w { *n.add(center) } else { 0.0 };
    sync_threads();
    if col < w && row < h {
        let k = 2 * radius + 1;
        // &s[ty-r][tx-r] and &N[row-r][col-r], one pointer per mask row of each: taps are
        // offsets from them (immediate with a literal radius). Either may point outside
        // its array; only in-bounds cells are read.
        let s_corner = s
            .wrapping_add((ty * T + tx) as usize)
            .wrapping_sub(ru * T as usize + ru);
        let n_corner = n.wrapping_add(center).wrapping_sub(ru * wu + ru);
        let mut acc = 0.0f32;
        for fr in 0..k {
            let sy = (ty + fr).wrapping_sub(radius);
            let ir = (row + fr).wrapping_sub(radius);
            let (s_line, n_line) = (
                s_corner.wrapping_add(fr as usize * T as usize),
                n_corner.wrapping_add(fr as usize * wu),
            );
            for fc in 0..k {
                let sx = (tx + fc).wrapping_sub(radius);
                if sx < T && sy < T {
                    acc = fma(Mask2d::get(fr * k + fc), *s_line.wrapping_add(fc as usize), acc);
                } else {
                    let ic = (col + fc).wrapping_sub(radius);
                    if ir < h && ic < w {
                        // `load_global`: kept apart from the shared load (see device.rs).
                        acc = fma(
                            Mask2d::get(fr * k + fc),
                            load_global(n_line.wrapping_add(fc as usize)),
                            acc,
                        );
                    }
                }
            }
        }
        *p.add(center) = acc;
    }
}

/// Run-time radius (up to `MAX_RADIUS_2D`).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_tiled_cached(n: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    body(radius, n, p, w, h)
}

crate::radius_entries!(body(n: *const f32, p: *mut f32, w: u32, h: u32);
    conv2d_tiled_cached_r0 = 0, conv2d_tiled_cached_r1 = 1, conv2d_tiled_cached_r2 = 2,
    conv2d_tiled_cached_r3 = 3, conv2d_tiled_cached_r4 = 4, conv2d_tiled_cached_r5 = 5,
    conv2d_tiled_cached_r6 = 6, conv2d_tiled_cached_r7 = 7, conv2d_tiled_cached_r8 = 8);

// The CUDA C++ twin compiles to 32 registers at r = 4 (2 blocks of 1024 per SM); without
// a bound ptxas spends 40 here and halves the blocks per SM. (r >= 6 would spill at 32.)
crate::launch_bounds!(conv2d_tiled_cached_r4, 1024, 2);
crate::launch_bounds!(conv2d_tiled_cached_r5, 1024, 2);
