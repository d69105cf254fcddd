//! 2D tiled, halos through the cache (textbook Fig. 7.15): the block is the output tile;
//! its own inputs go to shared memory, halo cells are read from global (L1/L2).
use crate::device::*;

/// Launch with a square block of `T`×`T` threads and `T*T*4` bytes of dynamic shared
/// memory; grid `ceil(w/T)`×`ceil(h/T)`.
///
/// # Safety
/// `n`, `p` hold `w*h` floats; `MASK_2D` holds `(2r+1)^2` taps; shared memory as above.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_tiled_cached(n: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    let s = shared_f32();
    let tile = block_dim_x();
    let (tx, ty) = (thread_x(), thread_y());
    let col = block_x() * tile + tx;
    let row = block_y() * tile + ty;
    *s.add((ty * tile + tx) as usize) = if row < h && col < w {
        *n.add((row * w + col) as usize)
    } else {
        0.0
    };
    sync_threads();
    if row >= h || col >= w {
        return;
    }
    let k = 2 * radius + 1;
    let mut acc = 0.0f32;
    for fr in 0..k {
        for fc in 0..k {
            let (sx, sy) = ((tx + fc).wrapping_sub(radius), (ty + fr).wrapping_sub(radius));
            let v = if sx < tile && sy < tile {
                *s.add((sy * tile + sx) as usize)
            } else {
                let (ir, ic) = ((row + fr).wrapping_sub(radius), (col + fc).wrapping_sub(radius));
                if ir < h && ic < w {
                    *n.add((ir * w + ic) as usize)
                } else {
                    0.0
                }
            };
            acc = fma(Mask2d::get(fr * k + fc), v, acc);
        }
    }
    *p.add((row * w + col) as usize) = acc;
}
