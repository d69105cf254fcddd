//! 2D with the mask in `__constant__` memory (textbook Fig. 7.9, `F_c`).
//!
//! `conv2d_const` takes the radius at run time; `conv2d_const_r{R}` (R = 0..=8) fix it
//! at compile time, as the CUDA C++ twin's `template <int R>`.
use crate::device::*;

/// As `conv2d_basic`, the mask read from `MASK_2D`. Launched in 32x8 blocks.
///
/// # Safety
/// `n`, `p` hold `w*h` floats; `MASK_2D` holds `(2r+1)^2` taps; `w+2r`, `h+2r` < 2^32.
#[inline(always)]
unsafe fn body(radius: u32, n: *const f32, p: *mut f32, w: u32, h: u32) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if col >= w || row >= h {
        return;
    }
    let (k, wu, ru) = (2 * radius + 1, w as usize, radius as usize);
    let center = row as usize * wu + col as usize;
    // &N[row-r][col-r] and one pointer per mask row, as in `conv2d_basic`.
    let corner = n.wrapping_add(center).wrapping_sub(ru * wu + ru);
    let mut acc = 0.0f32;
    for fr in 0..k {
        let ir = (row + fr).wrapping_sub(radius);
        let line = corner.wrapping_add(fr as usize * wu);
        for fc in 0..k {
            let ic = (col + fc).wrapping_sub(radius);
            if ir < h && ic < w {
                acc = fma(Mask2d::get(fr * k + fc), *line.wrapping_add(fc as usize), acc);
            }
        }
    }
    *p.add(center) = acc;
}

/// Run-time radius (up to `MAX_RADIUS_2D`).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_const(n: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    body(radius, n, p, w, h)
}

crate::radius_entries!(body(n: *const f32, p: *mut f32, w: u32, h: u32);
    conv2d_const_r0 = 0, conv2d_const_r1 = 1, conv2d_const_r2 = 2, conv2d_const_r3 = 3, conv2d_const_r4 = 4,
    conv2d_const_r5 = 5, conv2d_const_r6 = 6, conv2d_const_r7 = 7, conv2d_const_r8 = 8);
