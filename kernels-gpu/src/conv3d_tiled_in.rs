//! 3D input-tiled: the lecture's recommended MP-4 strategy. The block is the 8x8x8 input
//! tile; every thread loads one cell (no thread loads twice, no divergence while
//! loading), then only the inner `(8-2rx)(8-2ry)(8-2rz)` threads compute an output from
//! shared memory.
//!
//! `conv3d_tiled_in` takes the radii at run time; `conv3d_tiled_in_r{R}` fix them at
//! compile time, as the CUDA C++ peer's `template <int R>`.
use crate::device::*;
use layout::families::textbook::TILE_3D as IN;

/// Launched as `layout::families::conv3d_tiled_in` says: an 8×8×8 block, `512*4` bytes
/// of shared memory, one block per output tile.
///
/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_3D` holds the taps; radii
/// at most 3; launched as above.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, d] = a.extent;
    let [rx, ry, rz] = r;
    let s = shared_f32();
    let (out_w, out_h, out_d) = (IN - 2 * rx, IN - 2 * ry, IN - 2 * rz);
    let (tx, ty, tz) = (thread_x(), thread_y(), thread_z());
    // This thread's input cell; the tile starts (rz, ry, rx) before its outputs.
    let x = (block_x() * out_w + tx).wrapping_sub(rx);
    let y = (block_y() * out_h + ty).wrapping_sub(ry);
    let z = (block_z() * out_d + tz).wrapping_sub(rz);
    let inside = x < w && y < h && z < d;
    let at = (z as usize * h as usize + y as usize) * w as usize + x as usize;
    // SAFETY: (tz·IN + ty)·IN + tx < IN³, the shared floats launched; an inside cell
    // is in N.
    unsafe { *s.add(((tz * IN + ty) * IN + tx) as usize) = if inside { load_global(n.wrapping_add(at)) } else { 0.0 } };
    sync_threads();
    // Output coordinates inside the tile; the halo shell of threads only loaded.
    let (ox, oy, oz) = (tx.wrapping_sub(rx), ty.wrapping_sub(ry), tz.wrapping_sub(rz));
    if inside && ox < out_w && oy < out_h && oz < out_d {
        let (kx, ky) = (2 * rx + 1, 2 * ry + 1);
        let corner = s.wrapping_add(((oz * IN + oy) * IN + ox) as usize);
        let mut acc = 0.0f32;
        for fz in 0..2 * rz + 1 {
            for fy in 0..ky {
                let line = corner.wrapping_add(((fz * IN + fy) * IN) as usize);
                for fx in 0..kx {
                    // SAFETY: (oz+fz, oy+fy, ox+fx) is inside the tile.
                    let v = unsafe { *line.add(fx as usize) };
                    acc = fma(Mask3d::get(((fz * ky + fy) * kx + fx) as usize), v, acc);
                }
            }
        }
        // SAFETY: an inside cell is in P.
        unsafe { store_global(p.wrapping_add(at), acc) }
    }
}

/// Run-time radii (up to 3: the output tile `8-2r` must be at least 2).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv3d_tiled_in(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body; conv3d_tiled_in_r0 = 0, conv3d_tiled_in_r1 = 1, conv3d_tiled_in_r2 = 2, conv3d_tiled_in_r3 = 3);
