//! 2D input-tiled (textbook Fig. 7.12): the block is the input tile (`IN` = blockDim);
//! all threads load, only the inner `(IN-2r)^2` compute an output.
use crate::device::*;

/// Launch with a square block of `IN`×`IN` threads, `IN*IN*4` bytes of dynamic shared
/// memory, and a grid of `ceil(w/OUT)`×`ceil(h/OUT)` with `OUT = IN - 2r > 0`.
///
/// # Safety
/// `n`, `p` hold `w*h` floats; `MASK_2D` holds `(2r+1)^2` taps; shared memory as above.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_tiled_in(n: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    let s = shared_f32();
    let tile_in = block_dim_x();
    let tile_out = tile_in - 2 * radius;
    let (tx, ty) = (thread_x(), thread_y());
    // This thread's input cell; the tile starts r cells up and left of its outputs.
    let col = (block_x() * tile_out + tx).wrapping_sub(radius);
    let row = (block_y() * tile_out + ty).wrapping_sub(radius);
    let inside = row < h && col < w;
    *s.add((ty * tile_in + tx) as usize) = if inside { *n.add((row * w + col) as usize) } else { 0.0 };
    sync_threads();
    // Output coordinates inside the tile; the halo ring of threads only loaded.
    let (tc, tr) = (tx.wrapping_sub(radius), ty.wrapping_sub(radius));
    if inside && tc < tile_out && tr < tile_out {
        let k = 2 * radius + 1;
        let mut acc = 0.0f32;
        for fr in 0..k {
            for fc in 0..k {
                acc = fma(
                    Mask2d::get(fr * k + fc),
                    *s.add(((tr + fr) * tile_in + tc + fc) as usize),
                    acc,
                );
            }
        }
        *p.add((row * w + col) as usize) = acc;
    }
}
