//! 3D tiled, halos through the cache: the block is the 8x8x8 output tile; its own inputs
//! go to shared memory, halo cells are read from global memory (L1/L2), as the 2D
//! kernel of textbook Fig. 7.15.
//!
//! `conv3d_tiled_cached` takes the radii at run time; `conv3d_tiled_cached_r{R}` fix
//! them at compile time, as the CUDA C++ peer's `template <int R>`.
use crate::device::*;
use layout::families::textbook::TILE_3D as T;

/// Launched as `layout::families::conv3d_tiled_cached` says: an 8×8×8 block per output
/// tile, `512*4` bytes of shared memory.
///
/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_3D` holds the taps;
/// launched as above.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, d] = a.extent;
    let [rx, ry, rz] = r;
    let s = shared_f32();
    let (tx, ty, tz) = (thread_x(), thread_y(), thread_z());
    let (x, y, z) = (block_x() * T + tx, block_y() * T + ty, block_z() * T + tz);
    let (wu, plane) = (w as usize, w as usize * h as usize);
    let center = z as usize * plane + y as usize * wu + x as usize;
    let inside = x < w && y < h && z < d;
    // SAFETY: the index is below T³, the shared floats launched; an inside cell is in N.
    unsafe {
        *s.add(((tz * T + ty) * T + tx) as usize) = if inside {
            load_global(n.wrapping_add(center))
        } else {
            0.0
        }
    };
    sync_threads();
    if !inside {
        return;
    }
    let (kx, ky) = (2 * rx + 1, 2 * ry + 1);
    // &s[tz-rz][ty-ry][tx-rx] and &N[z-rz][y-ry][x-rx]: taps are offsets from them.
    // Either may point outside its array; only in-bounds cells are read.
    let s_corner = s
        .wrapping_add(((tz * T + ty) * T + tx) as usize)
        .wrapping_sub(((rz * T + ry) * T + rx) as usize);
    let n_corner = n
        .wrapping_add(center)
        .wrapping_sub(rz as usize * plane + ry as usize * wu + rx as usize);
    let mut acc = 0.0f32;
    for fz in 0..2 * rz + 1 {
        let (sz, iz) = ((tz + fz).wrapping_sub(rz), (z + fz).wrapping_sub(rz));
        for fy in 0..ky {
            let (sy, iy) = ((ty + fy).wrapping_sub(ry), (y + fy).wrapping_sub(ry));
            let s_line = s_corner.wrapping_add(((fz * T + fy) * T) as usize);
            let n_line = n_corner.wrapping_add(fz as usize * plane + fy as usize * wu);
            for fx in 0..kx {
                let m = Mask3d::get(((fz * ky + fy) * kx + fx) as usize);
                let sx = (tx + fx).wrapping_sub(rx);
                if sx < T && sy < T && sz < T {
                    // SAFETY: (sz, sy, sx) is inside the tile.
                    acc = fma(m, unsafe { *s_line.wrapping_add(fx as usize) }, acc);
                } else {
                    let ix = (x + fx).wrapping_sub(rx);
                    if ix < w && iy < h && iz < d {
                        // `load_global`: kept apart from the shared load (see device.rs).
                        // SAFETY: (iz, iy, ix) is inside N.
                        acc = fma(m, unsafe { load_global(n_line.wrapping_add(fx as usize)) }, acc);
                    }
                }
            }
        }
    }
    // SAFETY: an inside cell is in P.
    unsafe { store_global(p.wrapping_add(center), acc) }
}

/// Run-time radii (up to what `MASK_3D` holds).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv3d_tiled_cached(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body;
    conv3d_tiled_cached_r0 = 0, conv3d_tiled_cached_r1 = 1, conv3d_tiled_cached_r2 = 2, conv3d_tiled_cached_r3 = 3);
