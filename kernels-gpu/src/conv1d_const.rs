//! 1D with the mask in `__constant__` memory (textbook Fig. 7.8): every thread of a warp
//! reads the same tap, which the constant cache broadcasts.
use crate::device::*;

/// As `conv1d_basic`, the mask read from `MASK_1D`.
///
/// # Safety
/// `a.input` and `a.output` hold `a.extent[0]` floats; `MASK_1D` holds `2r+1` taps with
/// `r = a.radius[0]`; `len + 2r < 2^32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_const(a: ConvArgs) {
    let (n, p) = (input(&a), output(&a));
    let (len, radius) = (a.extent[0], a.radius[0]);
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
            // SAFETY: k is inside N.
            acc = fma(
                unsafe { load_global(first.wrapping_add(j as usize)) },
                Mask1d::get(j as usize),
                acc,
            );
        }
    }
    // SAFETY: i < len.
    unsafe { store_global(p.wrapping_add(i as usize), acc) }
}
