//! 2D with the mask in `__constant__` memory (textbook Fig. 7.9, `F_c`).
use crate::device::*;

/// As `conv2d_basic`, the mask read from `MASK_2D`.
///
/// # Safety
/// `n`, `p` hold `w*h` floats; `MASK_2D` holds `(2r+1)^2` taps; `w*h` < 2^32.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_const(n: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if col >= w || row >= h {
        return;
    }
    let k = 2 * radius + 1;
    let mut acc = 0.0f32;
    for fr in 0..k {
        for fc in 0..k {
            let (ir, ic) = ((row + fr).wrapping_sub(radius), (col + fc).wrapping_sub(radius));
            if ir < h && ic < w {
                acc = fma(Mask2d::get(fr * k + fc), *n.add((ir * w + ic) as usize), acc);
            }
        }
    }
    *p.add((row * w + col) as usize) = acc;
}
