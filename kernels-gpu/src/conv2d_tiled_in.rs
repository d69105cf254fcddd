//! 2D input-tiled (textbook Fig. 7.12): the block is the input tile (32x32); all threads
//! load, only the inner `(32-2r)^2` compute an output.
//!
//! `conv2d_tiled_in` takes the radius at run time; `conv2d_tiled_in_r{R}` (R = 0..=8) fix
//! it at compile time, as the CUDA C++ twin's `template <int R>`.
use crate::device::*;

/// Side of the input tile: the block is `IN`×`IN` threads.
const IN: u32 = 32;

/// Launch with a 32×32 block, `32*32*4` bytes of dynamic shared memory, and a grid of
/// `ceil(w/OUT)`×`ceil(h/OUT)` with `OUT = 32 - 2r > 0`.
///
/// # Safety
/// `n`, `p` hold `w*h` floats; `MASK_2D` holds `(2r+1)^2` taps; launch as above.
#[inline(always)]
unsafe fn body(radius: u32, n: *const f32, p: *mut f32, w: u32, h: u32) {
    let s = shared_f32();
    let tile_out = IN - 2 * radius;
    let (tx, ty) = (thread_x(), thread_y());
    // This thread's input cell; the tile starts r cells up and left of its outputs.
    let col = (block_x() * tile_out + tx).wrapping_sub(radius);
    let row = (block_y() * tile_out + ty).wrapping_sub(radius);
    let inside = row < h && col < w;
    let at = row as usize * w as usize + col as usize;
    *s.add((ty * IN + tx) as usize) = if inside { *n.add(at) } else { 0.0 };
    sync_threads();
    // Output coordinates inside the tile; the halo ring of threads only loaded.
    let (tc, tr) = (tx.wrapping_sub(radius), ty.wrapping_sub(radius));
    if inside && tc < tile_out && tr < tile_out {
        let k = 2 * radius + 1;
        // &s[tr][tc]: every tap s[tr+fr][tc+fc] is an offset from it (immediate when
        // the radius is a literal), as the twin's `s[IN][IN]` array.
        let corner = s.add((tr * IN + tc) as usize);
        let mut acc = 0.0f32;
        for fr in 0..k {
            let line = corner.add(fr as usize * IN as usize);
            for fc in 0..k {
                acc = fma(Mask2d::get(fr * k + fc), *line.add(fc as usize), acc);
            }
        }
        *p.add(at) = acc;
    }
}

/// Run-time radius (up to 15: the output tile `32-2r` must be positive).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_tiled_in(n: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    body(radius, n, p, w, h)
}

crate::radius_entries!(body(n: *const f32, p: *mut f32, w: u32, h: u32);
    conv2d_tiled_in_r0 = 0, conv2d_tiled_in_r1 = 1, conv2d_tiled_in_r2 = 2, conv2d_tiled_in_r3 = 3,
    conv2d_tiled_in_r4 = 4, conv2d_tiled_in_r5 = 5, conv2d_tiled_in_r6 = 6, conv2d_tiled_in_r7 = 7,
    conv2d_tiled_in_r8 = 8);
