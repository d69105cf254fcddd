//! 1D with the mask in `__constant__` memory (textbook Fig. 7.8): every thread of a warp
//! reads the same tap, which the constant cache broadcasts.
use crate::device::*;

/// As `conv1d_basic`, the mask read from `MASK_1D`.
///
/// # Safety
/// `n` and `p` hold `len` floats; `MASK_1D` holds `2r+1` taps; `len + 2r < 2^32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_const(n: *const f32, p: *mut f32, radius: u32, len: u32) {
    let i = block_x() * block_dim_x() + thread_x();
    if i >= len {
        return;
    }
    // &N[i - r], walked by pointer as in `conv1d_basic`.
    let first = n.wrapping_add(i as usize).wrapping_sub(radius as usize);
    let mut acc = 0.0f32;
    for j in 0..2 * radius + 1 {
        let k = (i + j).wrapping_sub(radius);
        if k < len {
            acc = fma(*first.wrapping_add(j as usize), Mask1d::get(j), acc);
        }
    }
    *p.add(i as usize) = acc;
}
