//! 2D tiled, halos through the cache (textbook Fig. 7.15): the block is the output tile;
//! its own inputs go to shared memory, halo cells are read from global (L1/L2).
//!
//! `conv2d_tiled_cached` takes the radii at run time; `conv2d_tiled_cached_r{R}` fix
//! them at compile time, as the CUDA C++ twin's `template <int R>`.
use crate::device::*;
use layout::families::textbook::TILE_2D as T;

/// Launched as `layout::families::conv2d_tiled_cached` says: a 32×32 block per 32×32
/// output tile, `32*32*4` bytes of shared memory.
///
/// # Safety
/// `a.input`, `a.output` hold `w*h` floats; `MASK_2D` holds the taps; launched as above;
/// `w+2rx`, `h+2ry` < 2^32.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, _] = a.extent;
    let (rx, ry) = (r[0], r[1]);
    let s = shared_f32();
    let (tx, ty) = (thread_x(), thread_y());
    let col = block_x() * T + tx;
    let row = block_y() * T + ty;
    let wu = w as usize;
    let center = row as usize * wu + col as usize;
    let inside = row < h && col < w;
    // SAFETY: ty·T + tx < T², the shared floats launched; an inside cell is in N.
    unsafe {
        *s.add((ty * T + tx) as usize) = if inside {
            load_global(n.wrapping_add(center))
        } else {
            0.0
        }
    };
    sync_threads();
    if inside {
        let kx = 2 * rx + 1;
        // &s[ty-ry][tx-rx] and &N[row-ry][col-rx], one pointer per mask row of each: taps
        // are offsets from them (immediate with literal radii). Either may point outside
        // its array; only in-bounds cells are read.
        let s_corner = s
            .wrapping_add((ty * T + tx) as usize)
            .wrapping_sub((ry * T + rx) as usize);
        let n_corner = n.wrapping_add(center).wrapping_sub(ry as usize * wu + rx as usize);
        let mut acc = 0.0f32;
        for fr in 0..2 * ry + 1 {
            let sy = (ty + fr).wrapping_sub(ry);
            let ir = (row + fr).wrapping_sub(ry);
            let (s_line, n_line) = (
                s_corner.wrapping_add((fr * T) as usize),
                n_corner.wrapping_add(fr as usize * wu),
            );
            for fc in 0..kx {
                let sx = (tx + fc).wrapping_sub(rx);
                if sx < T && sy < T {
                    // SAFETY: (sy, sx) is inside the tile.
                    acc = fma(
                        Mask2d::get((fr * kx + fc) as usize),
                        unsafe { *s_line.wrapping_add(fc as usize) },
                        acc,
                    );
                } else {
                    let ic = (col + fc).wrapping_sub(rx);
                    if ir < h && ic < w {
                        // `load_global`: kept apart from the shared load (see device.rs).
                        // SAFETY: (ir, ic) is inside N.
                        let v = unsafe { load_global(n_line.wrapping_add(fc as usize)) };
                        acc = fma(Mask2d::get((fr * kx + fc) as usize), v, acc);
                    }
                }
            }
        }
        // SAFETY: an inside cell is in P.
        unsafe { store_global(p.wrapping_add(center), acc) }
    }
}

/// Run-time radii (up to what `MASK_2D` holds).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_tiled_cached(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body;
    conv2d_tiled_cached_r0 = 0, conv2d_tiled_cached_r1 = 1, conv2d_tiled_cached_r2 = 2,
    conv2d_tiled_cached_r3 = 3, conv2d_tiled_cached_r4 = 4, conv2d_tiled_cached_r5 = 5,
    conv2d_tiled_cached_r6 = 6, conv2d_tiled_cached_r7 = 7, conv2d_tiled_cached_r8 = 8);

// The CUDA C++ twin compiles to 32 registers at r = 4 (2 blocks of 1024 per SM); without
// a bound ptxas spends 40 here and halves the blocks per SM. (r >= 6 would spill at 32.)
crate::launch_bounds!(conv2d_tiled_cached_r4, T * T, 2);
crate::launch_bounds!(conv2d_tiled_cached_r5, T * T, 2);
