//! 2D with the mask in `__constant__` memory (textbook Fig. 7.9, `F_c`).
//!
//! `conv2d_const` takes the radii at run time; `conv2d_const_r{R}` fix them at compile
//! time, as the CUDA C++ twin's `template <int R>`.
use crate::device::*;

/// As `conv2d_basic`, the mask read from `MASK_2D`. Launched in 32x8 blocks.
///
/// # Safety
/// `a.input`, `a.output` hold `w*h` floats; `MASK_2D` holds the `(2ry+1)(2rx+1)` taps;
/// `w+2rx`, `h+2ry` < 2^32.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, _] = a.extent;
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if col >= w || row >= h {
        return;
    }
    let (rx, ry) = (r[0], r[1]);
    let (kx, ky) = (2 * rx + 1, 2 * ry + 1);
    let wu = w as usize;
    let center = row as usize * wu + col as usize;
    // &N[row-ry][col-rx] and one pointer per mask row, as in `conv2d_basic`.
    let corner = n.wrapping_add(center).wrapping_sub(ry as usize * wu + rx as usize);
    let mut acc = 0.0f32;
    for fr in 0..ky {
        let ir = (row + fr).wrapping_sub(ry);
        let line = corner.wrapping_add(fr as usize * wu);
        for fc in 0..kx {
            let ic = (col + fc).wrapping_sub(rx);
            if ir < h && ic < w {
                // SAFETY: (ir, ic) is inside N.
                let nv = unsafe { load_global(line.wrapping_add(fc as usize)) };
                acc = fma(Mask2d::get((fr * kx + fc) as usize), nv, acc);
            }
        }
    }
    // SAFETY: (row, col) is inside P.
    unsafe { store_global(p.wrapping_add(center), acc) }
}

/// Run-time radii (up to what `MASK_2D` holds).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_const(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body;
    conv2d_const_r0 = 0, conv2d_const_r1 = 1, conv2d_const_r2 = 2, conv2d_const_r3 = 3, conv2d_const_r4 = 4,
    conv2d_const_r5 = 5, conv2d_const_r6 = 6, conv2d_const_r7 = 7, conv2d_const_r8 = 8);
