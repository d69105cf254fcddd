//! 2D basic (textbook Fig. 7.7): one thread per output, mask passed as a pointer.
//!
//! `conv2d_basic` takes the radius at run time; `conv2d_basic_r{R}` (R = 0..=8) fix it
//! at compile time, as the CUDA C++ twin's `template <int R>`: same body, loops unrolled.
use crate::device::*;

/// `P[y][x] = Σ_{i,j} N[y-r+i][x-r+j] · M[i][j]` over a row-major `w`×`h` image.
/// Launched in 32x8 blocks, one thread per output.
///
/// # Safety
/// `n`, `p` hold `w*h` floats, `m` holds `(2r+1)^2`; `w+2r`, `h+2r` < 2^32.
#[inline(always)]
unsafe fn body(radius: u32, n: *const f32, m: *const f32, p: *mut f32, w: u32, h: u32) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if col >= w || row >= h {
        return;
    }
    let (k, wu, ru) = (2 * radius + 1, w as usize, radius as usize);
    let center = row as usize * wu + col as usize;
    // &N[row-r][col-r], then one pointer per mask row: with a literal radius every tap is
    // an immediate offset from it (nvcc's `N[ir*w+ic]` with signed ints does the same).
    // It may point outside N; only in-bounds cells are read.
    let corner = n.wrapping_add(center).wrapping_sub(ru * wu + ru);
    let mut acc = 0.0f32;
    for fr in 0..k {
        // Negative coordinates wrap high and fail the bounds test: ghost cells are 0.
        let ir = (row + fr).wrapping_sub(radius);
        let line = corner.wrapping_add(fr as usize * wu);
        for fc in 0..k {
            let ic = (col + fc).wrapping_sub(radius);
            if ir < h && ic < w {
                acc = fma(*m.add((fr * k + fc) as usize), *line.wrapping_add(fc as usize), acc);
            }
        }
    }
    *p.add(center) = acc;
}

/// Run-time radius (any radius the host allows).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_basic(n: *const f32, m: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    body(radius, n, m, p, w, h)
}

crate::radius_entries!(body(n: *const f32, m: *const f32, p: *mut f32, w: u32, h: u32);
    conv2d_basic_r0 = 0, conv2d_basic_r1 = 1, conv2d_basic_r2 = 2, conv2d_basic_r3 = 3, conv2d_basic_r4 = 4,
    conv2d_basic_r5 = 5, conv2d_basic_r6 = 6, conv2d_basic_r7 = 7, conv2d_basic_r8 = 8);
