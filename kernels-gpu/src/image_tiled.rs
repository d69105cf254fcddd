//! Pitched multi-channel images, the textbook's way (chapter 7's tiled 2D kernel on
//! `wbImage_t`, Fig. 7.15-7.17): the element of pixel `(row, col)`, channel `c` is at
//! `row * pitch + col * channels + c`, and the kernel loops over the channels. The block
//! is the 32x32 input tile of one channel: every thread loads its pixel's channel into
//! shared memory, the inner `(32-2rx)(32-2ry)` compute an output; then the next channel.
//! u8 or f32 pixels (a run-time argument), ghost cells 0.
use crate::device::*;
use layout::args::pixel;
use layout::families::textbook::TILE_2D as IN;

/// # Safety
/// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·channels` pixels of
/// type `P`; `MASK_2D` holds the `(2ry+1)(2rx+1)` taps, radii at most 15; launched as
/// `layout::families::image_tiled` says.
#[inline(always)]
unsafe fn filter<P: Pixel>(a: &ConvArgs) {
    let (n, p) = (a.input as *const P, a.output as *mut P);
    let [w, h, _] = a.extent;
    let [rx, ry, _] = a.radius;
    let (channels, pitch) = (a.channels, (a.pitch / core::mem::size_of::<P>() as u32) as usize);
    let s = shared_f32();
    let (out_w, out_h) = (IN - 2 * rx, IN - 2 * ry);
    let (tx, ty) = (thread_x(), thread_y());
    // This thread's input pixel; the tile starts (ry, rx) pixels up and left of its outputs.
    let col = (block_x() * out_w + tx).wrapping_sub(rx);
    let row = (block_y() * out_h + ty).wrapping_sub(ry);
    let inside = row < h && col < w;
    let at = row as usize * pitch + col as usize * channels as usize;
    let (tc, tr) = (tx.wrapping_sub(rx), ty.wrapping_sub(ry));
    let computes = inside && tc < out_w && tr < out_h;
    let kx = 2 * rx + 1;
    for c in 0..channels {
        // SAFETY: ty·IN + tx < IN², the shared floats launched; an inside pixel is in N.
        unsafe {
            *s.add((ty * IN + tx) as usize) = if inside {
                P::load(n.wrapping_add(at + c as usize))
            } else {
                0.0
            }
        };
        sync_threads();
        if computes {
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
            // SAFETY: an inside pixel's channel is in P.
            unsafe { P::store1(p.wrapping_add(at + c as usize), acc) }
        }
        sync_threads(); // the tile is free for the next channel
    }
}

/// Run-time radii, channels and pixel type.
///
/// # Safety
/// As [`filter`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn image_tiled(a: ConvArgs) {
    if a.pixel == pixel::U8 {
        // SAFETY: forwarded from the entry's contract (u8 pixels).
        unsafe { filter::<u8>(&a) }
    } else {
        // SAFETY: forwarded from the entry's contract (f32 pixels).
        unsafe { filter::<f32>(&a) }
    }
}
