//! 2D basic (textbook Fig. 7.7): one thread per output, mask passed as a pointer.
//!
//! `conv2d_basic` takes the radii at run time; `conv2d_basic_r{R}` (R up to
//! `layout::families::textbook::COMPILED_2D`) fix them at compile time, as the CUDA C++
//! twin's `template <int R>`: same body, loops unrolled.
use crate::device::*;

/// `P[y][x] = Σ_{i,j} N[y-ry+i][x-rx+j] · M[i][j]` over a row-major `w`×`h` image with a
/// `(2ry+1)`×`(2rx+1)` mask, one thread per output in 32x8 blocks.
///
/// # Safety
/// `a.input`, `a.output` hold `w*h` floats, `a.mask` holds the mask; `w+2rx`, `h+2ry`
/// < 2^32; launched as `layout::families::conv2d_basic` says.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let (n, m, p) = (input(a), mask(a), output(a));
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
    // &N[row-ry][col-rx], then one pointer per mask row: with literal radii every tap is
    // an immediate offset from it (nvcc's `N[ir*w+ic]` with signed ints does the same).
    // It may point outside N; only in-bounds cells are read.
    let corner = n.wrapping_add(center).wrapping_sub(ry as usize * wu + rx as usize);
    let mut acc = 0.0f32;
    for fr in 0..ky {
        // Negative coordinates wrap high and fail the bounds test: ghost cells are 0.
        let ir = (row + fr).wrapping_sub(ry);
        let line = corner.wrapping_add(fr as usize * wu);
        for fc in 0..kx {
            let ic = (col + fc).wrapping_sub(rx);
            if ir < h && ic < w {
                // SAFETY: (ir, ic) is inside N; fr·kx + fc inside M.
                let (mv, nv) = unsafe {
                    (
                        load_global(m.wrapping_add((fr * kx + fc) as usize)),
                        load_global(line.wrapping_add(fc as usize)),
                    )
                };
                acc = fma(mv, nv, acc);
            }
        }
    }
    // SAFETY: (row, col) is inside P.
    unsafe { store_global(p.wrapping_add(center), acc) }
}

/// Run-time radii (any the host allows).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv2d_basic(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body;
    conv2d_basic_r0 = 0, conv2d_basic_r1 = 1, conv2d_basic_r2 = 2, conv2d_basic_r3 = 3, conv2d_basic_r4 = 4,
    conv2d_basic_r5 = 5, conv2d_basic_r6 = 6, conv2d_basic_r7 = 7, conv2d_basic_r8 = 8);
