//! 2D basic (textbook Fig. 7.7): one thread per output, mask passed as a pointer.
use crate::device::*;

/// `P[y][x] = Σ_{i,j} N[y-r+i][x-r+j] · M[i][j]` over a row-major `w`×`h` image.
///
/// # Safety
/// `n`, `p` hold `w*h` floats, `m` holds `(2r+1)^2`; `w*h`, `w+2r`, `h+2r` < 2^32.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_basic(n: *const f32, m: *const f32, p: *mut f32, radius: u32, w: u32, h: u32) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if col >= w || row >= h {
        return;
    }
    let k = 2 * radius + 1;
    let mut acc = 0.0f32;
    for fr in 0..k {
        for fc in 0..k {
            // Negative coordinates wrap high and fail the bounds test: ghost cells are 0.
            let (ir, ic) = ((row + fr).wrapping_sub(radius), (col + fc).wrapping_sub(radius));
            if ir < h && ic < w {
                acc = fma(*m.add((fr * k + fc) as usize), *n.add((ir * w + ic) as usize), acc);
            }
        }
    }
    *p.add((row * w + col) as usize) = acc;
}
