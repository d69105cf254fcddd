//! 2D input-tiled (textbook Fig. 7.12): the block is the input tile (32x32); all threads
//! load, only the inner `(32-2rx)x(32-2ry)` compute an output.
//!
//! `conv2d_tiled_in` takes the radii at run time; `conv2d_tiled_in_r{R}` fix them at
//! compile time, as the CUDA C++ twin's `template <int R>`.
use crate::device::*;
use layout::families::textbook::TILE_2D as IN;

/// Launched as `layout::families::conv2d_tiled_in` says: a 32×32 block, `32*32*4` bytes
/// of shared memory, one block per `(32-2rx)×(32-2ry)` output tile.
///
/// # Safety
/// `a.input`, `a.output` hold `w*h` floats; `MASK_2D` holds the taps; radii at most 15;
/// launched as above.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, _] = a.extent;
    let (rx, ry) = (r[0], r[1]);
    let s = shared_f32();
    let (out_w, out_h) = (IN - 2 * rx, IN - 2 * ry);
    let (tx, ty) = (thread_x(), thread_y());
    // This thread's input cell; the tile starts (ry, rx) cells up and left of its outputs.
    let col = (block_x() * out_w + tx).wrapping_sub(rx);
    let row = (block_y() * out_h + ty).wrapping_sub(ry);
    let inside = row < h && col < w;
    let at = row as usize * w as usize + col as usize;
    // SAFETY: ty·IN + tx < IN², the shared floats launched; an inside cell is in N.
    unsafe { *s.add((ty * IN + tx) as usize) = if inside { load_global(n.wrapping_add(at)) } else { 0.0 } };
    sync_threads();
    // Output coordinates inside the tile; the halo ring of threads only loaded.
    let (tc, tr) = (tx.wrapping_sub(rx), ty.wrapping_sub(ry));
    if inside && tc < out_w && tr < out_h {
        let kx = 2 * rx + 1;
        // &s[tr][tc]: every tap s[tr+fr][tc+fc] is an offset from it (immediate when
        // the radii are literals), as the twin's `s[IN][IN]` array.
        let corner = s.wrapping_add((tr * IN + tc) as usize);
        let mut acc = 0.0f32;
        for fr in 0..2 * ry + 1 {
            let line = corner.wrapping_add((fr * IN) as usize);
            for fc in 0..kx {
                // SAFETY: tr + fr < IN and tc + fc < IN: inside the tile.
                acc = fma(
                    Mask2d::get((fr * kx + fc) as usize),
                    unsafe { *line.add(fc as usize) },
                    acc,
                );
            }
        }
        // SAFETY: an inside cell is in P.
        unsafe { store_global(p.wrapping_add(at), acc) }
    }
}

/// Run-time radii (up to 15: the output tile `32-2r` must be positive).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_tiled_in(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body;
    conv2d_tiled_in_r0 = 0, conv2d_tiled_in_r1 = 1, conv2d_tiled_in_r2 = 2, conv2d_tiled_in_r3 = 3,
    conv2d_tiled_in_r4 = 4, conv2d_tiled_in_r5 = 5, conv2d_tiled_in_r6 = 6, conv2d_tiled_in_r7 = 7,
    conv2d_tiled_in_r8 = 8);
